"""Reading a folder an agent controls, from the host, without running anything or following any link.

The workspace volume is a folder on the host (its `Mountpoint`); the host reads it directly instead of
asking a command inside the container, which the agent could stop, hang or feed lies (measured: `du` run
as the agent skipped an unreadable folder and let 1.23 GB pass a 512 MB cap; a stopped exec wedged the
watchdog). Every path is resolved one component at a time from an open folder (`openat` with O_NOFOLLOW),
so a symlink anywhere on the way, swapped in at any moment, is never followed out of the folder; files are
opened non-blocking (a FIFO cannot hang the host) and read only when they are regular files, up to a
byte cap. The disk walk is bounded in entries, depth and time; what it could not finish is reported, and
the watchdog counts such a workspace as over its cap.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: errors that mean "not there, or not what we open": a link (ELOOP), a file where a folder should be, ...
_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES, errno.EPERM, errno.ENXIO, errno.EISDIR)


@dataclass(frozen=True)
class FileRead:
    data: bytes        # at most `max_bytes`
    size: int          # the file's size when opened
    truncated: bool    # the file holds more than `max_bytes`


@dataclass(frozen=True)
class DiskUsage:
    bytes: int         # allocated bytes (st_blocks) of every entry walked, hard links once
    entries: int
    seconds: float
    complete: bool     # False: a bound stopped the walk (or the folder could not be opened)
    problem: str = ""  # why it is not complete


def _components(rel: str) -> list[str]:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts) or rel.startswith("/"):
        raise ValueError(f"not a relative path inside the folder: {rel!r}")
    return parts


class HostTree:
    """A folder on the host whose contents an agent controls (the workspace volume's mount point)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _open_root(self) -> int:
        return os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    @contextlib.contextmanager
    def _parent(self, parts: list[str]) -> Iterator[int | None]:
        """An fd of the folder holding the last component, reached without following links (None: missing)."""
        fd = self._open_root()
        try:
            for name in parts[:-1]:
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in _NOT_THERE:
                        yield None
                        return
                    raise
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    def read_file(self, rel: str, max_bytes: int) -> FileRead | None:
        """The regular file at `rel`, up to `max_bytes`; None when it is missing, a link, or not a regular file
        (a FIFO, a socket, a folder), or when a link stands anywhere on its path."""
        parts = _components(rel)
        with self._parent(parts) as parent:
            if parent is None:
                return None
            try:
                fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=parent)
            except OSError as exc:
                if exc.errno in _NOT_THERE:
                    return None
                raise
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    return None
                chunks, got = [], 0
                while got <= max_bytes:
                    chunk = os.read(fd, min(1 << 20, max_bytes + 1 - got))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    got += len(chunk)
                data = b"".join(chunks)
                return FileRead(data[:max_bytes], st.st_size, len(data) > max_bytes)
            finally:
                os.close(fd)

    def disk_usage(self, *, max_entries: int = 200_000, max_depth: int = 128, time_limit_s: float = 5.0) -> DiskUsage:
        """Allocated bytes under the folder, walked without following links, within the bounds given. Only the
        kernel's answers count (lstat of each entry, as root, so a folder the agent made unreadable is read
        all the same); a walk a bound stopped is `complete=False` with the reason."""
        start = time.monotonic()
        deadline = start + time_limit_s
        try:
            root_fd = self._open_root()
        except OSError as exc:
            return DiskUsage(0, 0, 0.0, False, f"cannot open {self.root}: {exc.strerror}")
        total = os.fstat(root_fd).st_blocks * 512
        entries = 0
        linked: set[tuple[int, int]] = set()
        # one frame per open folder on the current path: (fd, names of its sub-folders left to visit)
        stack: list[tuple[int, list[str]]] = []

        def done(complete: bool, problem: str = "") -> DiskUsage:
            return DiskUsage(total, entries, round(time.monotonic() - start, 4), complete, problem)

        def scan(fd: int) -> list[str] | DiskUsage:
            nonlocal total, entries
            subdirs: list[str] = []
            with os.scandir(fd) as it:
                for entry in it:
                    entries += 1
                    if entries > max_entries:
                        return done(False, f"more than {max_entries} entries")
                    if entries % 512 == 0 and time.monotonic() > deadline:
                        return done(False, f"the walk took more than {time_limit_s:g}s")
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        continue  # removed meanwhile
                    if stat.S_ISDIR(st.st_mode):
                        subdirs.append(entry.name)
                    elif st.st_nlink > 1:
                        key = (st.st_dev, st.st_ino)
                        if key in linked:
                            continue
                        linked.add(key)
                    total += st.st_blocks * 512
            return subdirs

        try:
            first = scan(root_fd)
            if isinstance(first, DiskUsage):
                return first
            stack.append((root_fd, first))
            root_fd = -1
            while stack:
                fd, names = stack[-1]
                if not names:
                    os.close(stack.pop()[0])
                    continue
                name = names.pop()
                if time.monotonic() > deadline:
                    return done(False, f"the walk took more than {time_limit_s:g}s")
                if len(stack) >= max_depth:
                    return done(False, f"folders nested deeper than {max_depth}")
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in _NOT_THERE:
                        continue  # removed, or swapped for a link, since the scan: not ours to follow
                    return done(False, f"cannot open a folder: {exc.strerror}")
                try:
                    found = scan(child)
                except BaseException:
                    os.close(child)
                    raise
                if isinstance(found, DiskUsage):
                    os.close(child)
                    return found
                stack.append((child, found))
            return done(True)
        except OSError as exc:
            return done(False, f"the walk failed: {exc.strerror or exc}")
        finally:
            if root_fd >= 0:
                os.close(root_fd)
            for fd, _ in stack:
                os.close(fd)


__all__ = ["DiskUsage", "FileRead", "HostTree"]
