"""The grader's own pytest configuration: nothing in a delivery configures the test run.

pytest reads its settings from whichever configuration file it finds first above the test paths
(pytest 9: `pytest.toml`, `.pytest.toml`, `pytest.ini`, `.pytest.ini`, `pyproject.toml`, `tox.ini`,
`setup.cfg`; pytest 8 lacks the two TOML names), loads plugins from every installed distribution's
`pytest11` entry points, from `-p` options (also inside `addopts`), `PYTEST_PLUGINS` and `PYTEST_ADDOPTS`,
and conftest files from the test paths up to the configuration's folder. Any of those a delivery could
plant would run its code or change what counts as a pass. So the grader decides all of it:

- `-c <file>`: the file the task's pinned pytest would find in the ORIGINAL repo (with the hidden tests),
  chosen here from those folders, never from the delivery; the grading tree holds the original's bytes at
  that path (tree.py removes every delivered configuration file and restores the original's;
  `check_config` verifies it before the run). A repo without one gets the harness's empty `pytest.ini`.
  The original's markers, filterwarnings, addopts... therefore still apply, read by the task's own pytest
  exactly as in the original repo.
- `--rootdir=<workdir>` (node ids stay relative to the repo root) and `--confcutdir=<workdir>` (no
  conftest above the repo is read).
- `PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`, `PYTEST_ADDOPTS=""`, `PYTEST_PLUGINS=""`; the task's declared plugins
  (the `pytest11` entry points of the distributions installed in the image's own site-packages, i.e. the
  task's pinned packages: hypothesis for attrs) are named with `-p` by the launcher (`LAUNCHER`), which
  reads them from those folders only, never from a folder the delivery fills. `-p no:cacheprovider`: a
  delivered `.pytest_cache` is never read.

Only tree.py keeps out a delivered `conftest.py` inside the repo (the original's must be read) and
`sitecustomize.py` (the editable install puts the repo on sys.path; Python imports it at start).

The launcher runs pytest in the same interpreter (`python -I <launcher> ...` instead of `python -I -m pytest
...`): `-I` keeps the environment and the working folder out of `sys.path`, as before.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

from orchestrator import paths
from orchestrator.failures import ConfigError, InfraError

#: where the harness's files are placed in a grader (a fresh volume of their own)
HARNESS_DIR = "/sbx-harness"
LAUNCHER = "run_pytest.py"
EMPTY_CONFIG = "pytest.ini"

#: the configuration files pytest looks for in each folder, in its order (a pytest 8 does not know the first two)
CONFIG_NAMES_9 = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
CONFIG_NAMES_8 = CONFIG_NAMES_9[2:]
#: every name any pytest reads configuration from (tree.py never takes these from a delivery)
CONFIG_NAMES = frozenset(CONFIG_NAMES_9)

#: the environment of every pytest grading; it wins over the task's own env
ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": "", "PYTEST_PLUGINS": ""}

#: the launcher's source (orchestrator/incontainer/run_pytest.py), written into the harness folder
LAUNCHER_SOURCE = paths.incontainer_source(LAUNCHER)


def pytest_major(packages: dict[str, str] | None) -> int:
    """The pinned pytest's major version (9 when unknown: the version that reads the most files)."""
    version = (packages or {}).get("pytest", "")
    m = re.match(r"(\d+)", version)
    return int(m.group(1)) if m else 9


def _ini_sections(path: Path) -> set[str]:
    """Section names as iniconfig (pytest's ini parser) reads them: `[name]` at the start of a line, with
    anything after a `#` or `;` dropped; comment lines skipped."""
    sections = set()
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.rstrip()
        if not line or line.lstrip()[:1] in ("#", ";") or line[0] != "[":
            continue
        for c in "#;":
            line = line.split(c)[0].rstrip()
        if line.endswith("]"):
            sections.add(line[1:-1])
    return sections


def has_pytest_config(path: Path, major: int) -> bool:
    """Whether pytest `major` takes `path` as its configuration file (findpaths.load_config_dict_from_file)."""
    name = path.name
    if path.suffix == ".ini":
        return "pytest" in _ini_sections(path) or name == "pytest.ini" or (major >= 9 and name == ".pytest.ini")
    if path.suffix == ".cfg":
        return "tool:pytest" in _ini_sections(path)
    if path.suffix == ".toml":
        if name in ("pytest.toml", ".pytest.toml"):
            return major >= 9
        try:
            tool = tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("pytest", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return True  # pytest stops there with a usage error: so must the grading
        if not isinstance(tool, dict):
            return False
        if tool.get("ini_options") is not None:
            return True
        return major >= 9 and any(k != "ini_options" for k in tool)
    return False


def _start_dir(roots: Sequence[Path], args: Sequence[str]) -> str:
    """The common folder (relative, "" for the root) of the test paths that exist in any of `roots`
    (pytest's get_common_ancestor), or the root."""
    dirs: list[tuple[str, ...]] = []
    for arg in args:
        if arg.startswith("-"):
            continue
        rel = Path(arg.split("::", 1)[0])
        if rel.is_absolute() or ".." in rel.parts:
            continue
        for root in roots:
            p = root / rel
            if p.exists():
                dirs.append(rel.parts if p.is_dir() else rel.parent.parts)
                break
    if not dirs:
        return ""
    common = dirs[0]
    for d in dirs[1:]:
        n = 0
        while n < min(len(common), len(d)) and common[n] == d[n]:
            n += 1
        common = common[:n]
    return "/".join(common)


def config_file(roots: Path | Sequence[Path], args: Sequence[str], major: int) -> str | None:
    """The relative path of the configuration file pytest `major` would find for `args` in the tree that
    `roots` make (the first root holding a path wins: the hidden tests, then the original repo) by its
    locate_config, searched up to the tree's root; or None. Never given the delivery: the grader passes the
    original and the hidden tests, the builder the tree it made itself."""
    roots = [roots] if isinstance(roots, Path) else list(roots)
    names = CONFIG_NAMES_9 if major >= 9 else CONFIG_NAMES_8
    start = _start_dir(roots, args)
    parts = start.split("/") if start else []
    pyproject = None
    for depth in range(len(parts), -1, -1):
        base = "/".join(parts[:depth])
        for name in names:
            rel = f"{base}/{name}" if base else name
            p = next((root / rel for root in roots if (root / rel).exists()), None)
            if p is None or not p.is_file() or p.is_symlink():
                continue
            if name == "pyproject.toml" and pyproject is None:
                pyproject = rel
            if has_pytest_config(p, major):
                return rel
    return pyproject


def check_config(tree: Path, rel: str | None, trusted: Sequence[Path | None]) -> None:
    """The chosen file must be byte for byte the one in a trusted folder (the hidden tests, then the original
    repo): the tree builder guarantees it; this makes a mistake there stop the grading, not pass it."""
    if rel is None:
        return
    data = (tree / rel).read_bytes()
    for folder in trusted:
        if folder is not None and (folder / rel).is_file():
            if (folder / rel).read_bytes() == data:
                return
            break
    raise InfraError(f"grading tree: {rel} is not the original's configuration file")


def write_files(dest: Path) -> Path:
    """The harness folder (copied to HARNESS_DIR in the grader): the launcher and an empty configuration."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / LAUNCHER).write_text(LAUNCHER_SOURCE)
    (dest / EMPTY_CONFIG).write_text("[pytest]\n")
    return dest


def argv(command: Sequence[str], config_rel: str | None, workdir: str, harness_dir: str = HARNESS_DIR
         ) -> tuple[str, ...]:
    """The task's pytest command run through the launcher with the harness's options: `python [flags] -m
    pytest OPTS` becomes `python [flags] LAUNCHER -c CONFIG --rootdir W --confcutdir W -p no:cacheprovider OPTS`."""
    cmd = list(command)
    at = next((i for i in range(len(cmd) - 1) if cmd[i] == "-m" and cmd[i + 1] == "pytest"), None)
    if at is None:
        raise ConfigError(f"a pytest grader's command must run `-m pytest` (got {' '.join(cmd)!r})")
    config = f"{workdir}/{config_rel}" if config_rel else f"{harness_dir}/{EMPTY_CONFIG}"
    harness = [f"{harness_dir}/{LAUNCHER}", "-c", config, f"--rootdir={workdir}", f"--confcutdir={workdir}",
               "-p", "no:cacheprovider"]
    return (*cmd[:at], *harness, *cmd[at + 2:])


def environment(task_env: dict[str, str]) -> dict[str, str]:
    """The test command's environment: the task's, with the harness's pytest variables over it."""
    return {**task_env, **ENV}
