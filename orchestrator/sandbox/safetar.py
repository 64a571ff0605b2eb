"""Extract an untrusted tar stream by hand: regular files and directories only, within caps.

Never `tarfile.extractall`. A member is kept only if its name is relative, has no `..`, `.` or empty
component, and it is a plain file (not sparse, not a hard link) or a directory; everything else is
skipped with a reason. Files are created with O_EXCL | O_NOFOLLOW under a destination this code made,
so no link can exist there to be followed; modes are reduced to 0644 / 0755. Works on a stream
(`r|`), so nothing but the kept files ever touches the disk.
"""

from __future__ import annotations

import collections
import hashlib
import os
import stat
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

#: at most this many skipped members are listed one by one (all are counted)
MAX_LISTED = 1000
_NAME_MAX, _PATH_MAX = 255, 4096


@dataclass(frozen=True)
class Skip:
    path: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class TarCaps:
    max_entries: int
    max_file_bytes: int
    max_total_bytes: int


@dataclass
class Extracted:
    """What an extraction kept and skipped. `files` maps each kept file's member name to its sha256."""

    files: dict[str, str] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)
    bytes: int = 0
    skipped: list[Skip] = field(default_factory=list)
    skipped_counts: collections.Counter = field(default_factory=collections.Counter)
    truncated: bool = False

    def skip(self, path: str, reason: str, detail: str = "") -> None:
        self.skipped_counts[reason] += 1
        if reason in ("too_big", "over_total", "over_count"):
            self.truncated = True
        if len(self.skipped) < MAX_LISTED:
            self.skipped.append(Skip(path, reason, detail))


#: a policy sees each member that passed the generic checks and may skip it: return a reason, or None
Policy = Callable[[str, tarfile.TarInfo], "tuple[str, str] | None"]


def member_name_problem(name: str) -> str | None:
    """Why a member name is unsafe to create under a destination folder, or None if it is fine."""
    if not name or "\x00" in name:
        return "empty name or NUL byte"
    if name.startswith("/"):
        return "absolute path"
    parts = name.rstrip("/").split("/")
    if any(p == ".." for p in parts):
        return "parent reference (..)"
    if any(p in ("", ".") for p in parts):
        return "empty or '.' component"
    try:
        encoded = [p.encode("utf-8") for p in parts]
    except UnicodeEncodeError:
        return "not valid UTF-8"
    if any(len(p) > _NAME_MAX for p in encoded) or sum(len(p) + 1 for p in encoded) > _PATH_MAX:
        return "name too long"
    return None


def member_kind_problem(info: tarfile.TarInfo) -> tuple[str, str] | None:
    """(reason, detail) if the member is anything but a plain regular file or a directory."""
    if info.type in (tarfile.REGTYPE, tarfile.AREGTYPE) and info.sparse is None:
        return None
    if info.type == tarfile.DIRTYPE:
        return None
    if info.issym():
        return "symlink", f"-> {info.linkname[:300]}"
    if info.islnk():
        return "hardlink", f"-> {info.linkname[:300]}"
    if info.ischr() or info.isblk():
        return "special", "device"
    if info.isfifo():
        return "special", "fifo"
    if info.issparse() or info.sparse is not None:
        return "special", "sparse member"
    return "special", f"tar type {info.type!r}"


def _ensure_dir(root: Path, parts: list[str]) -> Path | None:
    """Create root/parts... one level at a time; None if a component exists and is not a real directory."""
    here = root
    for part in parts:
        here = here / part
        try:
            os.mkdir(here, 0o755)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(here).st_mode):
                return None
    return here


class ByteStream(Protocol):
    """What the extraction reads from: a tar stream read front to back (a file, BytesIO, a capped socket)."""

    def read(self, n: int = -1, /) -> bytes: ...


def _write_file(fileobj: ByteStream, target: Path, size: int, executable: bool) -> str:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o755 if executable else 0o644)
    digest = hashlib.sha256()
    written = 0
    with os.fdopen(fd, "wb") as out:
        while written < size:
            chunk = fileobj.read(min(1 << 20, size - written))
            if not chunk:
                raise tarfile.ReadError(f"{target.name}: member data ended early")
            out.write(chunk)
            digest.update(chunk)
            written += len(chunk)
    return digest.hexdigest()


def extract_strictly(fileobj: ByteStream, dest: Path, caps: TarCaps, policy: Policy | None = None) -> Extracted:
    """Read a tar stream from `fileobj` and create its plain files and directories under `dest`.

    `dest` must be an existing, empty directory. Raises tarfile.TarError for a stream that is not a
    tar or ends early (the caller maps it); unsafe members never raise, they are skipped and listed.
    """
    root = Path(dest)
    if any(root.iterdir()):
        raise FileExistsError(f"{root}: the destination must be empty")
    result = Extracted()
    entries = 0
    # stream mode ("r|") only ever reads the object; typeshed's fileobj type also asks for the write, tell,
    # seek and close of the random-access modes
    with tarfile.open(fileobj=fileobj, mode="r|") as tar:  # type: ignore[call-overload]
        for info in tar:
            name = info.name
            shown = name.encode("utf-8", "backslashreplace").decode("utf-8")[:_PATH_MAX]
            problem = member_name_problem(name)
            if problem:
                result.skip(shown, "bad_name", problem)
                continue
            kind = member_kind_problem(info)
            if kind:
                result.skip(shown, *kind)
                continue
            if entries >= caps.max_entries:
                result.skip(shown, "over_count", f"more than {caps.max_entries} entries; the rest were ignored")
                break
            if info.isfile():
                if info.size > caps.max_file_bytes:
                    result.skip(shown, "too_big", f"{info.size} bytes > {caps.max_file_bytes}")
                    continue
                if result.bytes + info.size > caps.max_total_bytes:
                    result.skip(shown, "over_total", f"{info.size} bytes would pass {caps.max_total_bytes}")
                    continue
            if policy is not None and (verdict := policy(name, info)) is not None:
                result.skip(shown, *verdict)
                continue
            parts = name.rstrip("/").split("/")
            if info.isdir():
                if _ensure_dir(root, parts) is None:
                    result.skip(shown, "conflict", "a file of that name already exists")
                    continue
                result.dirs.append(name.rstrip("/"))
                entries += 1
                continue
            parent = _ensure_dir(root, parts[:-1])
            if parent is None:
                result.skip(shown, "conflict", "a parent is a file")
                continue
            source = tar.extractfile(info)
            assert source is not None  # a regular member always has data
            try:
                digest = _write_file(source, parent / parts[-1], info.size, bool(info.mode & 0o111))
            except FileExistsError:
                result.skip(shown, "conflict", "duplicate name")
                continue
            result.files[name] = digest
            result.bytes += info.size
            entries += 1
    return result
