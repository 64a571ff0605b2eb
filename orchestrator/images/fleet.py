"""The fleet image (images/fleet/Dockerfile): a Ray node with sbx, built from the repository root.

Tagged `sbx-fleet:<hash>` by a hash of its inputs: the base image's ID, the lock, the Dockerfile, the node
script, the root .dockerignore, and every source file the image copies (orchestrator/, budgets/, the sandbox
image's inputs; not tasks/: jobs carry their tasks, orchestrator/tasks/bundle.py). The wheelhouse is not
hashed: the lock decides it. Docker's layer cache keeps the Python stack when only sbx's own code changed,
so a rebuild then takes seconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import docker

from orchestrator import paths
from orchestrator.images.content import ContentHash
from orchestrator.images.recipe import Recipe, ensure
from orchestrator.images.wheelhouse import ensure_wheelhouse, install_lock
from orchestrator.log import get_logger

log = get_logger(__name__)

#: what the Dockerfile copies from the repository root (folders are walked)
_INPUTS = (".dockerignore", "pyproject.toml", "orchestrator", "budgets",
           "images/Dockerfile", "images/requirements.lock", "images/.dockerignore", "images/sandbox",
           "images/scorer", "images/fleet/Dockerfile", "images/fleet/requirements.lock", "images/fleet/node.sh")
DOCKERFILE = "images/fleet/Dockerfile"


def fleet_dir(root: Path | None = None) -> Path:
    return (root or paths.REPO_ROOT) / "images" / "fleet"


def input_hash(base_id: str, root: Path | None = None) -> str:
    root = root or paths.REPO_ROOT
    return ContentHash(f"target=fleet\nbase={base_id}\n").trees(root, [root / name for name in _INPUTS]).tag_digest()


def prepare_context(root: Path | None = None) -> None:
    """Download the fleet wheelhouse on the host (a no-op when it already holds every pin)."""
    folder = fleet_dir(root)
    ensure_wheelhouse(folder / "requirements.lock", folder / "wheelhouse")


def _write_install_lock(root: Path) -> None:
    """The hash-checked install.lock the image installs from (the sha256 of each wheel, checked against the
    lock), written beside the wheels only when it changes: a rewritten file's new mtime misses the layer cache."""
    folder = fleet_dir(root)
    wheels = folder / "wheelhouse"
    text, path = install_lock(folder / "requirements.lock", wheels), wheels / "install.lock"
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def recipe(client: docker.DockerClient, tag: str, base: str, venv: Recipe, root: Path | None = None) -> Recipe:
    """The fleet image, built from the repository root on the sandbox's Python stack `venv` (an image of
    images/Dockerfile's venv stage, ensured first: under the fleet's lock, the outer one)."""
    root = root or paths.REPO_ROOT

    @contextlib.contextmanager
    def context() -> Iterator[Path]:
        ensure(client, venv)
        _write_install_lock(root)  # here, not in prepare_context: hashing the wheels is needed only for a build
        yield root

    return Recipe(tag=tag, context=context, dockerfile=DOCKERFILE, base=base, network_mode=None,
                  buildargs={"BASE_IMAGE": base, "VENV_IMAGE": venv.tag},
                  labels={"sbx.target": "fleet", "sbx.base": base})
