"""Build the sandbox and scorer images, tagged by a hash of their inputs.

Inputs are the Dockerfile, the lock file, every file under images/<target>/ and images/sandbox|scorer, and
the base image's ID. An unchanged input set maps to an existing tag and nothing is rebuilt. Each image
records its exact package versions in /opt/sbx/versions.txt; the build also copies them to the Home's
images/<name>-<hash>.versions.txt.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

from orchestrator import paths
from orchestrator.failures import ImageError, ImageNotBuilt
from orchestrator.images import EXTRA, TARGETS, fleet
from orchestrator.images.base import BaseMode, ensure_base, find_base
from orchestrator.images.content import ContentHash
from orchestrator.images.recipe import Recipe, ensure
from orchestrator.images.wheelhouse import ensure_wheelhouse, link_wheels
from orchestrator.log import get_logger

log = get_logger(__name__)

_HASHED = ("Dockerfile", "requirements.lock", ".dockerignore")


@dataclass(frozen=True)
class BuiltImage:
    name: str            # "sandbox" | "scorer"
    tag: str             # e.g. sbx-sandbox:1a2b3c4d5e6f
    image_id: str        # sha256:...
    size_bytes: int
    built: bool          # False when the tag already existed
    seconds: float
    versions: str        # contents of /opt/sbx/versions.txt


def input_hash(target: str, base_id: str, root: Path | None = None) -> str:
    """The digest of `target`'s tag: the base's ID, the shared recipe files and both stage folders (the
    Dockerfile copies them into their stages)."""
    root = root or paths.images_root()
    return (ContentHash(f"target={target}\nbase={base_id}\n")
            .trees(root, [*(root / name for name in _HASHED), *(root / sub for sub in TARGETS)]).tag_digest())


def target_tag(target: str, base_id: str) -> str:
    """The tag of `target` for the current inputs and this base."""
    if target == "fleet":
        return _tag(target, fleet.input_hash(base_id))
    return _tag(target, input_hash(target, base_id))


def _tag(target: str, digest: str) -> str:
    return f"sbx-{target}:{digest}"


def resolve_image(client: docker.DockerClient, target: str, base_mode: BaseMode = "auto") -> docker.models.images.Image:
    """The built image for the current inputs; a clear error when it has not been built yet."""
    base = find_base(client, base_mode)
    if base is None:
        raise ImageNotBuilt("no base image yet: run `sbx images build`")
    tag = target_tag(target, client.images.get(base).id)
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        raise ImageNotBuilt(f"image {tag} is not built for the current inputs: run `sbx images build`") from None


def _read_versions(client: docker.DockerClient, tag: str) -> str:
    user = "root" if tag.startswith("sbx-fleet:") else "agent"  # the fleet image has no agent user
    out = client.containers.run(tag, ["/opt/sbx/versions.txt"], entrypoint=["cat"], remove=True, network_mode="none",
                                user=user)
    return out.decode()


def build_images(
    client: docker.DockerClient,
    targets: tuple[str, ...] = TARGETS,
    base_mode: BaseMode = "auto",
    force: bool = False,
    versions_dir: Path | None = None,
) -> list[BuiltImage]:
    """Build `targets` (an unchanged image is not rebuilt); each image's versions.txt is also copied into
    `versions_dir` when given (a Home's `images_dir`)."""
    root = paths.images_root()
    for t in targets:
        if t not in TARGETS + EXTRA:
            raise ImageError(f"unknown image {t!r}; known: {', '.join(TARGETS + EXTRA)}")
    if "fleet" in targets and paths.CHECKOUT is None:
        # its Dockerfile copies the repository (pyproject.toml, orchestrator/), and its wheelhouse
        # would be written into the installed package
        raise ImageError("the fleet image builds from a checkout of sbx only (its Dockerfile copies the "
                         "checkout; docs/fleet.md), not from an installed sbx")
    base = ensure_base(client, base_mode)
    base_id = client.images.get(base).id
    # The wheelhouse is used on both bases: it makes even a registry machine's build independent of the index.
    wheels = paths.images_wheelhouse()
    ensure_wheelhouse(root / "requirements.lock", wheels)
    if "fleet" in targets:
        fleet.prepare_context()
    results = []
    for target in targets:
        tag = target_tag(target, base_id)
        got = ensure(client, _recipe(client, root, wheels, target, tag, base), force=force)
        image, built, seconds = got.image, got.built, got.seconds
        if target == "fleet":  # docker-compose.yml's default image names the latest fleet build
            image.tag("sbx-fleet", "latest")
        versions = _read_versions(client, tag)
        if versions_dir is not None:
            versions_dir.mkdir(parents=True, exist_ok=True)
            (versions_dir / f"{tag.replace(':', '-')}.versions.txt").write_text(versions)
        results.append(BuiltImage(target, tag, image.id, image.attrs["Size"], built, seconds, versions))
    return results


def _recipe(client: docker.DockerClient, root: Path, wheels: Path, target: str, tag: str, base: str) -> Recipe:
    if target == "fleet":
        return fleet.recipe(client, tag, base, venv_recipe(root, wheels, base, client.images.get(base).id))
    return Recipe(tag=tag, context=lambda: build_context(root, wheels), target=target, base=base,
                  buildargs={"BASE_IMAGE": base}, labels={"sbx.target": target, "sbx.base": base}, network_mode=None)


def venv_recipe(root: Path, wheels: Path, base: str, base_id: str) -> Recipe:
    """The sandbox's `venv` stage (the pinned Python stack) as an image of its own, which the fleet image
    starts from: built from the same Dockerfile and context as the sandbox, the engine serves it from the
    sandbox build's layers, so the stack is unpacked and compiled once per machine. (A copy of those steps in
    the fleet's Dockerfile did not hit that cache: the legacy builder hashed the same files differently.)"""
    return Recipe(tag=_tag("venv", input_hash("venv", base_id, root)), context=lambda: build_context(root, wheels),
                  target="venv", base=base, buildargs={"BASE_IMAGE": base},
                  labels={"sbx.target": "venv", "sbx.base": base}, network_mode=None)


def _not_recipes(folder: str, names: list[str]) -> list[str]:
    """What an images/ folder may hold that is no recipe (as setup.py's `not_ours`): a wheelhouse's wheels
    (the context gets the cache's), the bootstrapped root, bytecode."""
    if Path(folder).name == "wheelhouse":
        return names
    return [n for n in names if n in ("__pycache__", ".rootfs") or n.endswith((".pyc", ".pyo"))]


@contextlib.contextmanager
def build_context(root: Path, wheels: Path) -> Iterator[Path]:
    """The folder docker builds the standard images from: the recipes in `root` with `wheels` as their
    wheelhouse/. In a checkout that is `root` itself (its wheelhouse/ is `wheels`). An installed sbx's
    recipes are package data, never written, so the context is a copy in the cache: the recipes copied (a
    few hundred KB), the wheels hard-linked, all removed after the build. The image tags hash the recipes
    (`input_hash`), not the context, so both ways give the same tag."""
    if wheels == root / "wheelhouse":
        yield root
        return
    cache = paths.cache_root()
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sbx-images-context-", dir=cache) as tmp:
        context = Path(tmp) / "images"
        shutil.copytree(root, context, ignore=_not_recipes)
        link_wheels(sorted(wheels.glob("*.whl")), context / "wheelhouse")
        yield context
