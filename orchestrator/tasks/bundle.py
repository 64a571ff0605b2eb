"""A task as a fleet job carries it: the bundle's own files, inline, with their digest and the validated spec.

A node must run exactly the task the driver validated, not whatever its own `tasks/` copy holds under the
same name. `pack_task` takes the files a task's spec reads (the bundle folder; an ml task's repo where it
lies outside it, e.g. flight-delays-reference's `../flight-delays/repo`) as they are on the driver, so a run
made from them hashes to the same config; a locked tests task's trees do not travel: its task.yaml carries
their lock (the sdists by sha256 and the trees' digests), and the node materialises them into its own cache.

`unpack_task` on the node writes the files into `<cache>/tasks/bundles/<digest>/` when missing, or checks
the copy already there, and refuses any mismatch (what was sent, what the node holds, what it loads as)
with a DataError naming both digests. The digest is of every path and the sha256 of its bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.failures import ConfigError, DataError
from orchestrator.log import get_logger
from orchestrator.specs.task import TaskSpec, TestsTaskSpec, load_any_task

log = get_logger(__name__)

#: a bundle travels inline with every job: a task whose own files pass this should lock its trees instead
MAX_BUNDLE_BYTES = 16 << 20


@dataclass(frozen=True)
class TaskBundle:
    """A validated task, as a job carries it: `files` (path under the bundle root -> bytes), where its
    task.yaml is (`task_dir`), the spec as the driver validated it, and the digest of the files."""

    name: str
    kind: str
    task_dir: str
    digest: str
    spec: dict[str, Any]
    files: dict[str, bytes] = field(repr=False)
    #: the files with the executable bit (an ml repo's `run_experiment`)
    executable: tuple[str, ...] = ()


def files_digest(task_dir: str, files: dict[str, bytes], executable: tuple[str, ...] | frozenset[str] = ()) -> str:
    listing = {"task_dir": task_dir, "executable": sorted(executable),
               "files": {p: hashlib.sha256(b).hexdigest() for p, b in sorted(files.items())}}
    return hashlib.sha256(json.dumps(listing, sort_keys=True).encode()).hexdigest()


def _is_executable(path: Path) -> bool:
    return bool(path.stat().st_mode & 0o100)


def _regular_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts)


def spec_of(task: TaskSpec | TestsTaskSpec) -> dict[str, Any]:
    return task.model_dump(mode="json")


def pack_task(task: TaskSpec | TestsTaskSpec) -> TaskBundle:
    """The bundle of a loaded task (its trees, for a locked tests task, by their lock only)."""
    root = task.root.resolve()
    folders = [root]
    if isinstance(task, TaskSpec) and not task.repo_dir.resolve().is_relative_to(root):
        folders.append(task.repo_dir.resolve())   # e.g. flight-delays-reference's ../flight-delays/repo
    base = Path(os.path.commonpath([str(f) for f in folders]))
    if base == root:
        base = root.parent
    files: dict[str, bytes] = {}
    executable: set[str] = set()
    for folder in folders:
        for path in _regular_files(folder):
            rel = path.relative_to(base).as_posix()
            files[rel] = path.read_bytes()
            if _is_executable(path):
                executable.add(rel)
    size = sum(len(b) for b in files.values())
    if size > MAX_BUNDLE_BYTES:
        raise ConfigError(f"task {task.name}: its bundle is {size / 1e6:.1f} MB, more than a job carries "
                          f"({MAX_BUNDLE_BYTES >> 20} MB); make its trees from pinned sdists (a lock) instead")
    task_dir = root.relative_to(base).as_posix()
    exe = tuple(sorted(executable))
    return TaskBundle(task.name, task.kind, task_dir, files_digest(task_dir, files, exe), spec_of(task), files, exe)


def bundle_dir(cache: Path, digest: str) -> Path:
    return cache / "tasks" / "bundles" / digest


def held_digest(folder: Path, task_dir: str) -> str:
    """The digest of a bundle folder as it is on disk."""
    paths = _regular_files(folder)
    return files_digest(task_dir, {p.relative_to(folder).as_posix(): p.read_bytes() for p in paths},
                        frozenset(p.relative_to(folder).as_posix() for p in paths if _is_executable(p)))


def unpack_task(bundle: TaskBundle, cache: Path) -> TaskSpec | TestsTaskSpec:
    """The task a job carries, loaded from this node's cache copy of its bundle and materialised; a copy
    whose digest differs from the job's, or a spec that loads differently here, is refused."""
    sent = files_digest(bundle.task_dir, bundle.files, bundle.executable)
    if sent != bundle.digest:
        raise DataError(f"task {bundle.name}: the job's bundle files are sha256:{sent}, but the job says "
                        f"sha256:{bundle.digest}; refusing it")
    folder = bundle_dir(cache, bundle.digest)
    if folder.is_dir():
        held = held_digest(folder, bundle.task_dir)
        if held != bundle.digest:
            raise DataError(f"task {bundle.name}: this node holds a different bundle at {folder}: sha256:{held}, "
                            f"but the job carries sha256:{bundle.digest}; refusing to run it (remove that folder "
                            f"to take the job's)")
    else:
        _write(folder, bundle.files, set(bundle.executable))
    task = load_any_task(folder / bundle.task_dir)
    if spec_of(task) != bundle.spec:
        raise DataError(f"task {bundle.name} (bundle sha256:{bundle.digest}) loads differently on this node than "
                        f"on the driver (another sbx version?); refusing to run it")
    if isinstance(task, TestsTaskSpec):
        from orchestrator.tasks.materialise import materialise

        task = materialise(task, cache)
    return task


def _write(folder: Path, files: dict[str, bytes], executable: set[str]) -> None:
    """Write a bundle beside its final place, then rename it there (a concurrent writer's copy is checked
    by the next job like any other)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name[:12]}-", dir=folder.parent))
    try:
        for rel, data in files.items():
            path = tmp / rel
            if not path.resolve().is_relative_to(tmp.resolve()):
                raise DataError(f"bundle path {rel!r} leaves the bundle")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            os.chmod(path, 0o755 if rel in executable else 0o644)
        try:
            os.rename(tmp, folder)
        except OSError:
            if not folder.is_dir():
                raise
        log.info("tasks.bundle_written", folder=str(folder), files=len(files))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
