"""The content-addressed artifact store: delivered repos (git bundles), every train.py version, logs, and
per-run manifests, each stored once under the sha256 of its bytes.

Layout: `<root>/ab/cdef...` (the first two hex digits name the shard directory, the other 62 the file);
`<root>/.tmp/` holds writes in progress. A write goes to a temp file in the same file system, is flushed
to disk, made read-only, then renamed onto its final name: a reader sees the whole object or nothing,
and an object never changes once it is there. Two writers of the same bytes race harmlessly (both
renames put the same content in place). Nothing here follows a symlink or runs what it stores.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from orchestrator.failures import ArtifactNotFound, InvalidArtifact

_SHA256 = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1 << 20
_READ_ONLY = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH


def canonical_json(obj: Mapping[str, Any]) -> bytes:
    """One byte string per JSON object: sorted keys, no spaces, UTF-8, finite numbers only."""
    if not isinstance(obj, Mapping):
        raise InvalidArtifact(f"a manifest is a JSON object, got {type(obj).__name__}")
    try:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidArtifact(f"a manifest must be a JSON object of finite values: {exc}") from None
    return text.encode("utf-8")


class ArtifactStore:
    """Objects addressed by the sha256 of their bytes, under `root` (a Home's `artifacts_dir`)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def put_bytes(self, data: bytes) -> str:
        """Store `data`; return its sha256 (hex). Storing the same bytes again is a no-op."""
        sha = hashlib.sha256(data).hexdigest()
        if not self.has(sha):

            def fill(out: IO[bytes]) -> str:
                out.write(data)
                return sha

            self._write(fill)
        return sha

    def put_file(self, path: Path | str) -> str:
        """Store a copy of the regular file at `path` (a symlink is refused, never followed); return its sha256."""
        try:  # O_NONBLOCK: a FIFO must not block the open; it is refused below like any non-regular file
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the last component is a symlink
                raise InvalidArtifact(
                    f"{path} is a symlink; the artifact store never follows links"
                ) from None
            raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InvalidArtifact(f"{path} is not a regular file")
        with os.fdopen(fd, "rb") as src:

            def copy(out: IO[bytes]) -> str:
                digest = hashlib.sha256()
                while chunk := src.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                return digest.hexdigest()

            return self._write(copy)

    def put_manifest(self, manifest: Mapping[str, Any]) -> str:
        """Store a run's manifest (a JSON object naming its artifacts) as canonical JSON; return its sha256.
        The same content gives the same sha whatever the key order."""
        return self.put_bytes(canonical_json(manifest))

    def get_manifest(self, sha: str) -> dict[str, Any]:
        obj = json.loads(self.get_path(sha).read_bytes())
        if not isinstance(obj, dict):
            raise InvalidArtifact(f"artifact {sha} is not a manifest")
        return obj

    def has(self, sha: str) -> bool:
        return self._path(sha).is_file()

    def get_path(self, sha: str) -> Path:
        """The read-only file holding object `sha`; ArtifactNotFound if the store does not have it."""
        path = self._path(sha)
        if not path.is_file():
            raise ArtifactNotFound(f"no artifact {sha} in {self.root}")
        return path

    def verify(self, sha: str) -> bool:
        """Whether the stored bytes still hash to `sha`."""
        digest = hashlib.sha256()
        with self.get_path(sha).open("rb") as f:
            while chunk := f.read(_CHUNK):
                digest.update(chunk)
        return digest.hexdigest() == sha

    def _path(self, sha: str) -> Path:
        if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
            raise InvalidArtifact(f"not a sha256 artifact id: {sha!r}")
        return self.root / sha[:2] / sha[2:]

    def _write(self, fill: Callable[[IO[bytes]], str]) -> str:
        """Write through `fill` (which returns the sha256 of what it wrote) into a temp file, then rename
        it onto its sha. On any failure the temp file is removed and the store is unchanged."""
        tmp_dir = self.root / ".tmp"
        tmp_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=tmp_dir, prefix="put-")
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                sha = fill(out)
                out.flush()
                os.fsync(out.fileno())
            final = self._path(sha)
            if final.is_file():  # stored meanwhile, or before (put_file learns the sha only now)
                tmp.unlink()
                return sha
            os.chmod(tmp, _READ_ONLY)
            final.parent.mkdir(exist_ok=True)
            os.replace(tmp, final)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            raise
        _fsync_dir(final.parent)
        return sha


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
