"""A locked task's repo and hidden tests, made from its pinned sdists into a content-addressed cache.

A `tests` task built from PyPI releases commits no third-party file: its task.yaml `lock` says which sdist
each tree comes from (the `source` pins both by sha256), which files it keeps, and the digest of the tree
that makes. `materialise` returns the spec with `repo_dir` / `hidden_dir` pointing at
`<cache>/tasks/trees/<digest>/`, after checking each tree's digest there; a missing tree is made (the sdist
from `<cache>/sdists/`, or downloaded and checked), and a tree whose bytes no longer match its name (edited
in place, a file added) is refused, said with both digests, and made again from the sdist. A tree the
sdist no longer makes as the lock says (a changed `drop`, another unpacker) is an error naming both
digests: nothing runs on a tree other than the one that was validated.

Trees hold regular files only (no symlinks, no bytecode, no empty folders), with modes normalised to 0644
or 0755, so the digest (`tree_digest`: each path, its executable bit and the sha256 of its bytes) is the
same on any machine for the same sdist.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path
from typing import Literal

from orchestrator.failures import DataError
from orchestrator.images.content import file_sha256
from orchestrator.log import get_logger
from orchestrator.specs.task import SdistTree, Source, TestsTaskSpec
from orchestrator.tasks import pypi

log = get_logger(__name__)

TreeState = Literal["cached", "missing", "tampered"]


def trees_root(cache: Path) -> Path:
    return cache / "tasks" / "trees"


def tree_path(cache: Path, digest: str) -> Path:
    return trees_root(cache) / digest


def tree_digest(root: Path) -> tuple[str, int]:
    """(sha256 of the tree, number of regular files). Every entry counts: folders, files with their
    executable bit and bytes, symlinks by their target, anything else by its name (so nothing can be added
    to a materialised tree unnoticed)."""
    h = hashlib.sha256()
    files = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted([*dirnames, *filenames]):
            path = base / name
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entry = f"L {rel} {os.readlink(path)}"
            elif stat.S_ISDIR(info.st_mode):
                entry = f"D {rel}"
            elif stat.S_ISREG(info.st_mode):
                files += 1
                entry = f"F {rel} {'x' if info.st_mode & stat.S_IXUSR else '-'} {file_sha256(path)}"
            else:
                entry = f"O {rel}"
            h.update(entry.encode("utf-8", "surrogateescape") + b"\n")
    return h.hexdigest(), files


def dropped(rel: str, globs: tuple[str, ...]) -> bool:
    """Whether an sdist path is left out by `drop` globs (`docs/` also drops everything below docs)."""
    return any(fnmatch.fnmatch(rel, g) or rel.startswith(g.rstrip("/") + "/") for g in globs)


def _put(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)
    os.chmod(dest, 0o755 if src.stat().st_mode & stat.S_IXUSR else 0o644)


def make_tree(src: Path, dest: Path, drop: tuple[str, ...] = (), select: tuple[str, ...] = ()) -> None:
    """Copy an unpacked sdist's files into `dest` (absent or empty): the `select`ed files (each must be a
    regular file), else every regular file not dropped, outside `__pycache__`, that is not a symlink."""
    if select:
        for rel in select:
            path = src / rel
            if path.is_symlink() or not path.is_file():
                raise DataError(f"{rel}: not a file of the sdist")
            _put(path, dest / rel)
        return
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src).as_posix()
        if path.is_symlink() or not path.is_file() or "__pycache__" in path.parts or dropped(rel, drop):
            continue
        _put(path, dest / rel)


def _sdist(source: Source, which: Literal["before", "after"], cache: Path) -> Path:
    if which == "before":
        return pypi.fetch_pinned(source.library, source.before, source.before_sdist, source.before_sha256, cache)
    return pypi.fetch_pinned(source.library, source.after, source.after_sdist, source.after_sha256, cache)


def tree_state(cache: Path, tree: SdistTree) -> TreeState:
    path = tree_path(cache, tree.sha256)
    if not path.is_dir():
        return "missing"
    return "cached" if tree_digest(path)[0] == tree.sha256 else "tampered"


def ensure_tree(task: TestsTaskSpec, which: Literal["repo", "hidden"], cache: Path) -> Path:
    """The cache folder of one of a locked task's trees, checked by digest (made when missing or altered)."""
    assert task.lock is not None and task.source is not None
    tree: SdistTree = getattr(task.lock, which)
    path = tree_path(cache, tree.sha256)
    if path.is_dir():
        found, _ = tree_digest(path)
        if found == tree.sha256:
            return path
        log.warning("tasks.tree_refused", message=f"task {task.name}: the cached {which} tree {path} holds "
                    f"sha256:{found}, not the locked sha256:{tree.sha256}: refused, and made again from "
                    f"{_sdist_name(task.source, tree)}")
        _remove(path)
    root = trees_root(cache)
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".make-", dir=root))
    try:
        archive = _sdist(task.source, tree.sdist, cache)
        unpacked = pypi.unpack(archive, work / "sdist")
        made = work / "tree"
        try:
            make_tree(unpacked, made, tree.drop, tree.select)
        except DataError as exc:
            raise DataError(f"task {task.name}: {which}: {archive.name}: {exc}") from None
        digest, files = tree_digest(made)
        if digest != tree.sha256:
            raise DataError(f"task {task.name}: {which} made from {archive.name} is sha256:{digest} ({files} files), "
                            f"but the lock says sha256:{tree.sha256} ({tree.files} files); nothing runs on it")
        try:
            os.rename(made, path)
        except OSError:  # another process made it meanwhile: theirs is checked like ours
            if tree_digest(path)[0] != tree.sha256:
                raise
        log.info("tasks.tree_made", task=task.name, tree=which, sha256=digest, files=files)
        return path
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _sdist_name(source: Source, tree: SdistTree) -> str:
    return source.before_sdist if tree.sdist == "before" else source.after_sdist


def _remove(path: Path) -> None:
    """Take a refused tree out of its digest's place at once (renamed aside), then delete it."""
    aside = path.with_name(f".bad-{path.name}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:  # another process took it out first
        return
    shutil.rmtree(aside, ignore_errors=True)


def materialise(task: TestsTaskSpec, cache: Path | None = None) -> TestsTaskSpec:
    """`task` with its repo and hidden tests usable: for a locked task, the checked cache trees (made when
    missing); a task with its trees in its bundle (the fixture, Harbor imports) is returned as it is."""
    if task.lock is None:
        return task
    if cache is None:
        from orchestrator.tasks.environment import default_cache

        cache = default_cache()
    return task.with_trees(ensure_tree(task, "repo", cache), ensure_tree(task, "hidden", cache))


def lock_tree(tree_dir: Path, sdist: Literal["before", "after"], *, drop: tuple[str, ...] = (),
              select: tuple[str, ...] = ()) -> SdistTree:
    """The lock entry of a tree made by `make_tree` (the builder writes it)."""
    digest, files = tree_digest(tree_dir)
    return SdistTree(sdist=sdist, drop=drop, select=select, sha256=digest, files=files)


def store_tree(tree_dir: Path, cache: Path) -> Path:
    """Move a freshly made tree into the cache under its digest (the builder's trees); returns its folder."""
    digest, _ = tree_digest(tree_dir)
    dest = tree_path(cache, digest)
    if dest.is_dir() and tree_digest(dest)[0] == digest:
        shutil.rmtree(tree_dir)
        return dest
    if dest.exists():
        _remove(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(tree_dir, dest)
    return dest
