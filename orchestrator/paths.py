"""Where sbx keeps its state on the host: prepared data, the ledger, artifacts, image build caches."""

from __future__ import annotations

import os
from pathlib import Path

#: repository root (the folder holding tasks/, budgets/, images/)
REPO_ROOT = Path(__file__).resolve().parent.parent


def sbx_home() -> Path:
    """State root: $SBX_HOME, else `.sbx` in the current directory."""
    return Path(os.environ.get("SBX_HOME", ".sbx")).resolve()


def data_root() -> Path:
    return sbx_home() / "data"


def tasks_root() -> Path:
    return Path(os.environ.get("SBX_TASKS", REPO_ROOT / "tasks"))


def budgets_root() -> Path:
    return Path(os.environ.get("SBX_BUDGETS", REPO_ROOT / "budgets"))


def images_root() -> Path:
    return REPO_ROOT / "images"


def shared_dir() -> Path | None:
    """$SBX_SHARED_DIR: the parent of every folder sbx bind-mounts into a container (run socket folders,
    scorer folders, copies of agent files), or None for the defaults (/tmp, the system temp folder).

    The engine resolves a bind mount's source on its own host. When sbx itself runs in a container that
    drives the host's engine through its socket (a fleet worker), the folders it makes must exist at the
    same path on the host: mount one host folder at the same path in the worker and name it here."""
    value = os.environ.get("SBX_SHARED_DIR")
    if not value:
        return None
    path = Path(value)
    path.mkdir(parents=True, exist_ok=True)
    return path
