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
