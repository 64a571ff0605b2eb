"""The grading tree: what a grader runs the hidden tests against, built on the host from three folders.

1. The delivered repo, copied file by file: regular files and folders only (a symlink, device or fifo is
   skipped and listed), no `.git`, no bytecode (`__pycache__`, `*.pyc`: a planted pyc of a restored file
   would be loaded instead of it), within count and size caps.
2. Every protected path taken from the original instead: test folders, `conftest.py`, pytest.ini, tox.ini,
   setup.cfg, pyproject.toml... Files are restored whole (a config file's test section is not split out:
   the agent's edits elsewhere in such a file are lost, which is the safe side). Whatever the task says,
   `sitecustomize.py`, `usercustomize.py`, `*.pth`, `*.dist-info/` and `*.egg-info/` (any case: importlib
   matches them so) anywhere (they run code at interpreter start or register pytest plugins) are removed,
   and so are `conftest.py` and every file name any pytest reads configuration from (`pytest.toml`,
   `.pytest.toml`, `pytest.ini`, `.pytest.ini`, `pyproject.toml`, `tox.ini`, `setup.cfg`: the grader passes
   the original's with `-c`, pytest_harness.py; for a script grader only when asked), each restored where
   the original has it. A new top-level module or package (not in the original) is dropped when asked: it
   could shadow pytest, a test dependency or the standard library once the repo root is on sys.path.
3. The hidden tests, written over the result at their relative paths.

Only the original and the hidden tests are trusted. Nothing here runs or parses the delivered files.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_ALWAYS_FILES = re.compile(r"(^|/)(sitecustomize\.py|usercustomize\.py|[^/]*\.pth)$")
_ALWAYS_DIRS = re.compile(r"(^|/)[^/]*\.(dist-info|egg-info)(/|$)", re.IGNORECASE)
#: pytest's configuration files and conftest files: never the delivery's (the grader reads the original's)
_TEST_CONFIG = re.compile(r"(^|/)(conftest\.py|pytest\.toml|\.pytest\.toml|pytest\.ini|\.pytest\.ini|"
                          r"pyproject\.toml|tox\.ini|setup\.cfg)$")
_BYTECODE = re.compile(r"(^|/)__pycache__(/|$)|\.py[co]$")


@dataclass(frozen=True)
class TreeCaps:
    max_files: int = 100_000
    max_file_bytes: int = 256 << 20
    max_total_bytes: int = 1 << 30


@dataclass
class TreeReport:
    """What building the tree did, path by path (relative posix paths)."""

    copied: int = 0
    bytes: int = 0
    restored: list[str] = field(default_factory=list)
    removed: list[tuple[str, str]] = field(default_factory=list)   # (path, why)
    hidden: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        whys: dict[str, int] = {}
        for _, why in self.removed:
            whys[why] = whys.get(why, 0) + 1
        return {"copied": self.copied, "bytes": self.bytes, "restored": len(self.restored),
                "removed": whys, "hidden": len(self.hidden)}


class TreeError(ValueError):
    """The delivered tree is past a cap (the delivery fails grading with this reason)."""


def _glob_regex(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c)))
        i += 1
    return "".join(out)


class Protected:
    """Matches relative posix paths against protected patterns.

    `dir/` protects a folder and everything below it (also a file of that name); a bare name such as
    `conftest.py` or `*.ini` matches at any depth; a pattern with a slash is a path from the root, where `*`
    stays within one folder and `**` spans any number of them."""

    def __init__(self, patterns: Sequence[str]) -> None:
        parts = []
        for pat in patterns:
            pat = pat.strip()
            if not pat:
                continue
            if pat.endswith("/"):
                parts.append(f"{_glob_regex(pat.rstrip('/'))}(?:/.*)?")
            elif "/" not in pat:
                parts.append(f"(?:.*/)?{_glob_regex(pat)}")
            else:
                parts.append(_glob_regex(pat.lstrip("/")))
        self._re = re.compile("^(?:" + "|".join(parts) + ")$") if parts else None

    def __call__(self, rel: str) -> bool:
        return bool(self._re and self._re.match(rel))


def always_handled(rel: str, test_config: bool = True) -> bool:
    """Paths removed from every delivery (restored from the original where it has them); pytest's
    configuration and conftest files unless `test_config` is off (a script grader's own tests decide)."""
    return bool(_ALWAYS_FILES.search(rel) or _ALWAYS_DIRS.search(rel)
                or (test_config and _TEST_CONFIG.search(rel)))


def _walk(root: Path, report: TreeReport | None) -> Iterator[tuple[str, Path]]:
    """(relative path, absolute path) of every regular file under root, never following a link."""
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        with os.scandir(root / rel_dir if rel_dir else root) as it:
            entries = sorted(it, key=lambda e: e.name)
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                if entry.name == ".git" or entry.name == "__pycache__":
                    if report is not None:
                        report.removed.append((rel + "/", "git" if entry.name == ".git" else "bytecode"))
                    continue
                stack.append(rel)
            elif stat.S_ISREG(mode):
                yield rel, Path(entry.path)
            elif report is not None:
                report.removed.append((rel, "symlink" if stat.S_ISLNK(mode) else "special"))


def _place(dest: Path, rel: str, report: TreeReport) -> Path:
    """The target path for rel under dest, removing any file that sits where a folder must go."""
    parts = rel.split("/")
    here = dest
    for part in parts[:-1]:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            here.unlink()
            report.removed.append((str(here.relative_to(dest)), "conflict"))
        here.mkdir(exist_ok=True)
    target = here / parts[-1]
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
        report.removed.append((rel + "/", "conflict"))
    return target


def _copy(src: Path, target: Path) -> int:
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fin, open(target, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)
        size = fout.tell()
    os.chmod(target, 0o755 if os.stat(src).st_mode & 0o111 else 0o644)
    return size


_MODULE_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".pyd")


def _module_name(root: Path, top: str) -> str | None:
    """The module a top-level entry of `root` makes importable, or None (namespace folders cannot shadow)."""
    path = root / top
    if path.is_symlink():
        return None
    if path.is_dir():
        return top if any((path / f"__init__{s}").exists() for s in _MODULE_SUFFIXES) else None
    if path.is_file() and top.endswith(_MODULE_SUFFIXES):
        return top.split(".", 1)[0]
    return None


def top_level_names(root: Path) -> set[str]:
    """Importable top-level names a folder provides (modules, extension modules, packages)."""
    if not root.is_dir():
        return set()
    return {name for entry in root.iterdir() if (name := _module_name(root, entry.name))}


def build_grading_tree(delivered: Path, original: Path, hidden: Path | None, dest: Path,
                       protected: Sequence[str], *, drop_new_top_level: bool = False,
                       test_config: bool = True, caps: TreeCaps | None = None) -> TreeReport:
    """Make `dest` (absent or empty) the tree the hidden tests run against; see the module docstring."""
    caps = caps or TreeCaps()
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise FileExistsError(f"{dest}: the destination must be empty")
    report = TreeReport()
    is_protected = Protected(protected)
    original_top = top_level_names(original)
    for rel, src in _walk(delivered, report):
        module = _module_name(delivered, rel.split("/", 1)[0]) if drop_new_top_level else None
        if _BYTECODE.search(rel):
            report.removed.append((rel, "bytecode"))
        elif test_config and _TEST_CONFIG.search(rel):
            report.removed.append((rel, "test_config"))
        elif always_handled(rel, test_config):
            report.removed.append((rel, "startup_hook"))
        elif is_protected(rel):
            report.removed.append((rel, "protected"))
        elif module is not None and module not in original_top:
            report.removed.append((rel, "new_top_level_module"))
        else:
            size = src.stat().st_size
            if report.copied + 1 > caps.max_files:
                raise TreeError(f"more than {caps.max_files} files delivered")
            if size > caps.max_file_bytes:
                raise TreeError(f"{rel}: {size} bytes > {caps.max_file_bytes}")
            if report.bytes + size > caps.max_total_bytes:
                raise TreeError(f"the delivered files pass {caps.max_total_bytes} bytes")
            report.bytes += _copy(src, _place(dest, rel, report))
            report.copied += 1
    for rel, src in _walk(original, None):
        if _BYTECODE.search(rel):
            continue
        if always_handled(rel, test_config) or is_protected(rel):
            _copy(src, _place(dest, rel, report))
            report.restored.append(rel)
    if hidden is not None:
        for rel, src in _walk(hidden, None):
            _copy(src, _place(dest, rel, report))
            report.hidden.append(rel)
    return report

