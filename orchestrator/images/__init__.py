"""Sandbox and scorer images: an offline Debian base when no registry answers, a host-side wheelhouse,
and builds tagged by a hash of their inputs. Names load on first use, so the CLI's parser does not
import the Docker SDK."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.images.build import BuiltImage, build_images, resolve_image

#: the images `sbx images build` makes by default, and those built only when named
TARGETS = ("sandbox", "scorer")
EXTRA = ("fleet",)

__all__ = ["EXTRA", "TARGETS", "BuiltImage", "build_images", "resolve_image"]


def __getattr__(name: str) -> Any:
    if name in ("BuiltImage", "build_images", "resolve_image"):
        from orchestrator.images import build

        return getattr(build, name)
    raise AttributeError(f"module 'orchestrator.images' has no attribute {name!r}")
