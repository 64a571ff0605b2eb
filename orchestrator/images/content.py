"""The one content hash of image inputs, and the one way files get into a build context.

Every image tag is `sbx-<family>:<12 hex>` of a `ContentHash` over what decides the image: a header naming
the family and its parent's ID, then files as `path NUL bytes NUL`, or length-prefixed parts. Each family
feeds it the inputs it always fed (orchestrator/images/recipe.py), so today's tags, and the images built
under them, stay valid. Trees are walked by `tree_files` alone: what a hash covers and what a context copies
cannot drift apart family by family.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

#: what never goes into an image's inputs: bytecode, which the interpreter rewrites at will
_SKIP_DIRS = frozenset({"__pycache__"})
_SKIP_SUFFIXES = (".pyc", ".pyo")


def file_sha256(path: Path) -> str:
    """The sha256 (hex) of a file's bytes, read in blocks (wheels and sdists run to hundreds of MB)."""
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def tree_files(top: Path) -> list[Path]:
    """The files under `top` (or `top` itself when it is a file), sorted, without bytecode or symlinks; none
    when `top` is missing. Symlinks are left out because none of sbx's recipes holds one and a task's repo
    is copied into its context with them resolved, as it always was hashed."""
    if top.is_file():
        return [top]
    return sorted(p for p in top.rglob("*")
                  if p.is_file() and not p.is_symlink() and not _SKIP_DIRS.intersection(p.relative_to(top).parts)
                  and not p.name.endswith(_SKIP_SUFFIXES))


class ContentHash:
    """sha256 of an image's inputs, fed in order; `tag_digest` is the 12 hex digits a tag carries."""

    def __init__(self, header: str = "") -> None:
        self._h = hashlib.sha256(header.encode())

    def file(self, name: str, data: bytes) -> ContentHash:
        self._h.update(name.encode() + b"\0" + data + b"\0")
        return self

    def files(self, root: Path, files: Iterable[Path]) -> ContentHash:
        """Each file by its path under `root` and its bytes."""
        for f in files:
            self.file(f.relative_to(root).as_posix(), f.read_bytes())
        return self

    def trees(self, root: Path, tops: Iterable[Path]) -> ContentHash:
        """Every file of each of `tops` (files or folders under `root`), in that order."""
        for top in tops:
            self.files(root, tree_files(top))
        return self

    def part(self, data: bytes) -> ContentHash:
        """One input framed by its length, so adjacent parts cannot trade bytes."""
        self._h.update(len(data).to_bytes(8, "big") + data)
        return self

    def raw(self, data: bytes) -> ContentHash:
        self._h.update(data)
        return self

    def digest(self) -> bytes:
        return self._h.digest()

    def tag_digest(self) -> str:
        return self._h.hexdigest()[:12]


def tree_digest(top: Path) -> bytes:
    """The full digest of a tree's files (paths under `top` and bytes): one part of a larger hash."""
    return ContentHash().trees(top, [top]).digest()


def parts_digest(*parts: bytes) -> str:
    """The tag digest of length-prefixed parts (the environment, task and task-sandbox images)."""
    h = ContentHash()
    for p in parts:
        h.part(p)
    return h.tag_digest()


def link_file(src: Path, dest: Path) -> None:
    """Put `src` at `dest` in a build context: a hard link where the filesystem allows (a context in the cache
    beside its files costs no copy, and keeps the source's mtime, which the legacy builder's COPY cache reads),
    else a copy."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)
    except OSError:  # another filesystem
        shutil.copyfile(src, dest)
