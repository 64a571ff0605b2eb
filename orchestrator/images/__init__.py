"""Sandbox and scorer images: an offline Debian base when no registry answers, a host-side wheelhouse,
and builds tagged by a hash of their inputs."""

from orchestrator.images.build import BuiltImage, build_images, resolve_image

__all__ = ["BuiltImage", "build_images", "resolve_image"]
