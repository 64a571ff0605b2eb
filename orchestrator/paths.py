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


#: programs that run inside containers (orchestrator/incontainer/): read as text and handed in, never imported
INCONTAINER_DIR = Path(__file__).resolve().parent / "incontainer"


def incontainer_source(name: str) -> str:
    """The source of the in-container program `name` (a file of orchestrator/incontainer/), as the host hands
    it to a container. Read, not imported: the host never imports these modules (pyproject.toml's contract)."""
    return (INCONTAINER_DIR / name).read_text()


#: the stand-in model's shipped scenarios (package data, so found from an installed package too)
SCENARIOS_DIR = Path(__file__).resolve().parent / "model" / "scenarios"
#: what `sbx model serve` plays when given no --scenario: the CI scenario the endpoints file's stand-in is for
DEFAULT_SCENARIO = "flight-delays"


def shipped_scenarios() -> dict[str, Path]:
    """The shipped scenarios by name (file stem). Here, not in orchestrator.model: `sbx --help` lists them and
    must not load the server's libraries."""
    return {p.stem: p for p in sorted(SCENARIOS_DIR.glob("*.yaml"))}


def scenario_path(arg: str) -> Path:
    """A scenario given as a shipped scenario's name or as a file; a ConfigError names the shipped ones."""
    from orchestrator.failures import ConfigError

    shipped = shipped_scenarios()
    if arg in shipped:
        return shipped[arg]
    path = Path(arg)
    if path.is_file():
        return path
    raise ConfigError(f"no scenario {arg!r}: neither a file nor a shipped scenario "
                      f"(shipped: {', '.join(shipped) or 'none'}, in {SCENARIOS_DIR})")
