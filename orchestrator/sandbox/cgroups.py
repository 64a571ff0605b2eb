"""Host-side access to a container's cgroups, for cgroup v1 and v2 behind one small interface.

The meter needs four things of a cgroup: its CPU usage (kernel accounting, which counts exited
processes, forkserver pools and unwaited children), the processes in it, a child it can move
processes into, and a way to kill everything in it at once. Measured here: the cgroup filesystem is
read-only inside the container even for root, and the host can create a child under the container's
cgroup and move processes into it; children inherit it.

- v1: accounting in the `cpuacct` hierarchy, atomic kill through the `freezer` hierarchy (freeze,
  SIGKILL everything, thaw: a frozen fork bomb cannot outrun the kill).
- v2: one tree; `cpu.stat` usage_usec, `cgroup.kill` (freeze + kill where it is missing).
"""

from __future__ import annotations

import errno
import os
import signal
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from orchestrator.failures import CgroupError

CGROUP_ROOT = Path("/sys/fs/cgroup")


class CgroupNode(Protocol):
    """One cgroup (v1: the same-named group in each hierarchy we use)."""

    name: str

    def usage_seconds(self) -> float: ...
    def pids(self) -> list[int]: ...
    def add(self, pid: int) -> None: ...
    def child(self, name: str) -> CgroupNode: ...
    def kill_all(self, spare: Collection[int] = ()) -> int: ...
    def remove(self) -> None: ...
    def exists(self) -> bool: ...


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CgroupError(f"cannot read {path}: {exc.strerror}") from None


def _write(path: Path, value: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(value)
    except OSError as exc:
        if exc.errno == errno.ESRCH:  # the process is already gone: nothing to move or kill
            return
        raise CgroupError(f"cannot write {value!r} to {path}: {exc.strerror}") from None


def _procs_under(path: Path) -> list[int]:
    """Every pid in `path` and its descendants (cgroup.procs is per group, not recursive)."""
    pids: list[int] = []
    for dirpath, _dirs, files in os.walk(path):
        if "cgroup.procs" in files:
            try:
                pids += [int(x) for x in Path(dirpath, "cgroup.procs").read_text().split()]
            except FileNotFoundError:
                continue
    return pids


def _kill_pids(pids: list[int]) -> int:
    killed = 0
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    return killed


def _rmdir_tree(path: Path, deadline_s: float = 10.0) -> None:
    """Remove a cgroup and its children, deepest first, waiting for killed processes to leave."""
    if not path.exists():
        return
    end = time.monotonic() + deadline_s
    for dirpath, _dirs, _files in sorted(os.walk(path), key=lambda t: -len(t[0])):
        while True:
            try:
                os.rmdir(dirpath)
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno == errno.EBUSY and time.monotonic() < end:
                    time.sleep(0.02)
                    continue
                raise CgroupError(f"cannot remove cgroup {dirpath}: {exc.strerror}") from None


@dataclass
class V1Node:
    """A cgroup in the v1 `cpuacct` (accounting) and `freezer` (kill) hierarchies."""

    name: str
    cpuacct: Path
    freezer: Path

    def exists(self) -> bool:
        return self.cpuacct.is_dir()

    def usage_seconds(self) -> float:
        return int(_read(self.cpuacct / "cpuacct.usage")) / 1e9

    def pids(self) -> list[int]:
        return sorted(set(_procs_under(self.cpuacct)))

    def add(self, pid: int) -> None:
        _write(self.cpuacct / "cgroup.procs", str(pid))
        _write(self.freezer / "cgroup.procs", str(pid))

    def child(self, name: str) -> V1Node:
        node = V1Node(name, self.cpuacct / name, self.freezer / name)
        for p in (node.cpuacct, node.freezer):
            try:
                p.mkdir(exist_ok=True)
            except OSError as exc:
                raise CgroupError(f"cannot create cgroup {p}: {exc.strerror}") from None
        return node

    def kill_all(self, spare: Collection[int] = ()) -> int:
        """SIGKILL every process in this group and below, but those in `spare`, frozen first (a fork bomb
        cannot outrun the kill)."""
        state = self.freezer / "freezer.state"
        _write(state, "FROZEN")
        end = time.monotonic() + 5
        while _read(state).strip() != "FROZEN" and time.monotonic() < end:
            time.sleep(0.005)
        try:
            # Processes moved into cpuacct children sit in the matching freezer children too.
            return _kill_pids(sorted((set(_procs_under(self.freezer)) | set(_procs_under(self.cpuacct))) - set(spare)))
        finally:
            _write(state, "THAWED")

    def remove(self) -> None:
        self.kill_all() if self.exists() else None
        _rmdir_tree(self.cpuacct)
        _rmdir_tree(self.freezer)


@dataclass
class V2Node:
    """A cgroup in the unified (v2) hierarchy."""

    name: str
    path: Path

    def exists(self) -> bool:
        return self.path.is_dir()

    def usage_seconds(self) -> float:
        for line in _read(self.path / "cpu.stat").splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
        raise CgroupError(f"{self.path}/cpu.stat has no usage_usec")

    def pids(self) -> list[int]:
        return sorted(set(_procs_under(self.path)))

    def add(self, pid: int) -> None:
        _write(self.path / "cgroup.procs", str(pid))

    def child(self, name: str) -> V2Node:
        node = V2Node(name, self.path / name)
        try:
            node.path.mkdir(exist_ok=True)
        except OSError as exc:
            raise CgroupError(f"cannot create cgroup {node.path}: {exc.strerror}") from None
        return node

    def kill_all(self, spare: Collection[int] = ()) -> int:
        """SIGKILL every process in this group and below but those in `spare` (`cgroup.kill` when nothing is
        spared; else frozen first, then each pid)."""
        pids = self.pids()
        if not spare and (self.path / "cgroup.kill").exists():
            _write(self.path / "cgroup.kill", "1")  # the kernel kills the whole subtree, forks included
            return len(pids)
        _write(self.path / "cgroup.freeze", "1")
        try:
            return _kill_pids(sorted(set(self.pids()) - set(spare)))
        finally:
            _write(self.path / "cgroup.freeze", "0")

    def remove(self) -> None:
        if self.exists():
            self.kill_all()
        _rmdir_tree(self.path)


@dataclass(frozen=True)
class CgroupLayout:
    """Which cgroup version the host runs and where its hierarchies are mounted."""

    version: int
    root: Path = CGROUP_ROOT

    @staticmethod
    def detect(root: Path = CGROUP_ROOT) -> CgroupLayout:
        if (root / "cgroup.controllers").exists():
            return CgroupLayout(2, root)
        if (root / "cpuacct").is_dir() or any(root.glob("*cpuacct*")):
            return CgroupLayout(1, root)
        raise CgroupError(f"no cgroup v1 cpuacct or v2 hierarchy under {root}")

    def _v1_dir(self, controller: str) -> Path:
        direct = self.root / controller
        if direct.is_dir():
            return direct
        for p in self.root.iterdir():  # e.g. cpu,cpuacct mounted together
            if controller in p.name.split(","):
                return p
        raise CgroupError(f"no v1 {controller} hierarchy under {self.root}")

    def node_of_pid(self, pid: int) -> CgroupNode:
        """The cgroup that holds `pid` (the container's init process gives the container's cgroup)."""
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError as exc:
            raise CgroupError(f"cannot read /proc/{pid}/cgroup: {exc.strerror}") from None
        groups: dict[str, str] = {}
        for line in lines:
            _, controllers, path = line.split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                groups[c] = path.lstrip("/")
        if self.version == 2:
            if "" not in groups:
                raise CgroupError(f"pid {pid} has no v2 cgroup")
            return V2Node(groups[""] or "/", self.root / groups[""])
        missing = [c for c in ("cpuacct", "freezer") if c not in groups]
        if missing:
            raise CgroupError(f"pid {pid} is in no v1 {'/'.join(missing)} cgroup")
        return V1Node(groups["cpuacct"], self._v1_dir("cpuacct") / groups["cpuacct"],
                      self._v1_dir("freezer") / groups["freezer"])


def cgroup_of_pid(pid: int) -> str:
    """The raw /proc/<pid>/cgroup text, for checking which container a caller belongs to."""
    return Path(f"/proc/{pid}/cgroup").read_text()


def oom_kills(layout: CgroupLayout, pid: int) -> int:
    """How many processes the kernel's OOM killer has killed in the memory cgroup of `pid` (-1 if unknown)."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        if layout.version == 2:
            rel = next(line.split(":", 2)[2] for line in lines if line.startswith("0::"))
            text = (layout.root / rel.lstrip("/") / "memory.events").read_text()
        else:
            rel = next(line.split(":", 2)[2] for line in lines if "memory" in line.split(":", 2)[1].split(","))
            text = (layout._v1_dir("memory") / rel.lstrip("/") / "memory.oom_control").read_text()
    except (OSError, StopIteration, CgroupError):
        return -1
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    return -1
