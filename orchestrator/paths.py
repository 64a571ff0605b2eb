"""Where sbx's own files are: the repository's tasks, budgets and image build contexts.

State (ledger, artifacts, data, runs) is not here: it lives in a `Home` (orchestrator/home.py), passed
explicitly. `$SBX_TASKS` and `$SBX_BUDGETS` name other folders of task bundles and budget files.
"""

from __future__ import annotations

import os
from pathlib import Path

#: repository root (the folder holding tasks/, budgets/, images/)
REPO_ROOT = Path(__file__).resolve().parent.parent


def tasks_root() -> Path:
    return Path(os.environ.get("SBX_TASKS", REPO_ROOT / "tasks"))


def budgets_root() -> Path:
    return Path(os.environ.get("SBX_BUDGETS", REPO_ROOT / "budgets"))


def images_root() -> Path:
    return REPO_ROOT / "images"
