"""Where sbx's own files are: the shipped tasks, budgets, studies and image recipes.

From a checkout (or an editable install) they are the checkout's top-level folders, beside `orchestrator/`.
An installed wheel carries a copy of each inside the package, under `orchestrator/_bundled/` (setup.py's
build hook puts them there), and reads that copy. The checkout's folder wins whenever sbx runs from one, so
a task added under tasks/ is seen at once, with no reinstall.

State (ledger, artifacts, data, runs) is not here: it lives in a `Home` (orchestrator/home.py), passed
explicitly. `$SBX_TASKS` and `$SBX_BUDGETS` name other folders of task bundles and budget files.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent

#: the folder holding `orchestrator/`: a checkout's root, or site-packages for an installed wheel
REPO_ROOT = _PACKAGE.parent

#: the checkout sbx runs from (its pyproject.toml beside `orchestrator/`), or None for an installed wheel
CHECKOUT: Path | None = REPO_ROOT if (REPO_ROOT / "pyproject.toml").is_file() else None

#: where a wheel carries the shipped folders (never present in a checkout: the build writes it into the wheel)
BUNDLED = _PACKAGE / "_bundled"

#: the top-level folders sbx reads its own files from; setup.py bundles these same four into the wheel
#: (tests/test_packaging.py checks that an installed wheel finds each one, file for file)
SHIPPED_FOLDERS = ("tasks", "budgets", "images", "studies")


def shipped(name: str) -> Path:
    """The shipped folder `name`: the checkout's when sbx runs from one and it is there, else the wheel's copy.
    When neither is there (a fleet node ships no tasks/), the checkout's path, so a "not found" names it."""
    if name not in SHIPPED_FOLDERS:
        raise ValueError(f"{name!r} is not a shipped folder ({', '.join(SHIPPED_FOLDERS)})")
    if CHECKOUT is not None and (CHECKOUT / name).is_dir():
        return CHECKOUT / name
    if (BUNDLED / name).is_dir():
        return BUNDLED / name
    return (CHECKOUT or REPO_ROOT) / name


def tasks_root() -> Path:
    return Path(os.environ.get("SBX_TASKS") or shipped("tasks"))


def budgets_root() -> Path:
    return Path(os.environ.get("SBX_BUDGETS") or shipped("budgets"))


def images_root() -> Path:
    return shipped("images")


def studies_root() -> Path:
    return shipped("studies")


def cache_root() -> Path:
    """Where wheelhouses, downloaded sdists and materialised task trees are kept: $SBX_CACHE, else the
    checkout's .cache/ (gitignored), else $XDG_CACHE_HOME/sbx (~/.cache/sbx) for an installed wheel, whose
    package folder is no place for downloads."""
    if os.environ.get("SBX_CACHE"):
        return Path(os.environ["SBX_CACHE"])
    if CHECKOUT is not None:
        return CHECKOUT / ".cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "sbx"


def in_checkout(path: Path) -> bool:
    """Whether `path` is inside the checkout sbx runs from: a place sbx may write its own files (gitignored
    downloads, new tasks). An installed wheel's shipped folders are package data, read and never written."""
    return CHECKOUT is not None and Path(path).resolve().is_relative_to(CHECKOUT.resolve())


def is_package_data(path: Path) -> bool:
    """Whether `path` is in an installed sbx's copy of its shipped folders (`BUNDLED`): read, never written
    (the next upgrade replaces it, and a system site-packages is read-only)."""
    return Path(path).resolve().is_relative_to(BUNDLED.resolve())


def agents_lock_root() -> Path:
    """Where `sbx images lock --agents` writes agents.lock and locks/ given no --out: the checkout's
    images/agents/ when sbx runs from one, else ./agents in the working folder (an installed sbx's recipes are
    package data), seeded there with a copy of the shipped folder."""
    shipped_agents = images_root() / "agents"
    if in_checkout(shipped_agents):
        return shipped_agents
    return Path.cwd() / "agents"


def images_wheelhouse() -> Path:
    """Where `sbx images build` keeps the standard images' wheels: the checkout's images/wheelhouse/ (beside
    the recipes, gitignored), else cache_root()/images-wheelhouse for an installed wheel, whose images/ folder
    is package data (images/build.py then builds from a context assembled in the cache)."""
    if in_checkout(images_root()):
        return images_root() / "wheelhouse"
    return cache_root() / "images-wheelhouse"


def new_tasks_root() -> Path:
    """Where `sbx tasks new`, `tasks make` and `tasks import-harbor` write a task given no --out: $SBX_TASKS,
    else the checkout's tasks/, else ./tasks in the working folder (an installed sbx's shipped tasks are package
    data; a task made there would vanish with the next upgrade). The commands print the folder they wrote."""
    if os.environ.get("SBX_TASKS"):
        return Path(os.environ["SBX_TASKS"])
    if in_checkout(shipped("tasks")):
        return shipped("tasks")
    return Path.cwd() / "tasks"


#: programs that run inside containers (orchestrator/incontainer/): read as text and handed in, never imported
INCONTAINER_DIR = _PACKAGE / "incontainer"


def incontainer_file(name: str) -> Path:
    """The in-container program `name` (a path under orchestrator/incontainer/, e.g. "agents/noop.py"), for a
    host that hands it in as a file (a read-only bind mount) rather than as text. Never imported."""
    path = INCONTAINER_DIR / name
    if not path.resolve().is_relative_to(INCONTAINER_DIR) or not path.is_file():
        raise FileNotFoundError(f"no in-container program {name!r} in {INCONTAINER_DIR}")
    return path


def incontainer_source(name: str) -> str:
    """The source of the in-container program `name` (a file under orchestrator/incontainer/), as the host
    hands it to a container. Read, not imported: the host never imports these modules (pyproject.toml's
    contract)."""
    return incontainer_file(name).read_text()


#: the stand-in model's shipped scenarios (package data, so found from an installed package too)
SCENARIOS_DIR = _PACKAGE / "model" / "scenarios"
#: what `sbx model serve` plays when given no --scenario: the CI scenario the endpoints file's stand-in is for
DEFAULT_SCENARIO = "flight-delays"


def shipped_scenarios() -> dict[str, Path]:
    """The shipped scenarios by name (file stem). Here, not in orchestrator.model: `sbx --help` lists them and
    must not load the server's libraries."""
    return {p.stem: p for p in sorted(SCENARIOS_DIR.glob("*.yaml"))}


def scenario_path(arg: str) -> Path:
    """A scenario given as a shipped scenario's name or as a file; a ConfigError names the shipped ones."""
    from orchestrator.failures import ConfigError

    known = shipped_scenarios()
    if arg in known:
        return known[arg]
    path = Path(arg)
    if path.is_file():
        return path
    raise ConfigError(f"no scenario {arg!r}: neither a file nor a shipped scenario "
                      f"(shipped: {', '.join(known) or 'none'}, in {SCENARIOS_DIR})")
