"""The commit an agent's repository is at, read by the host as plain bounded files: git never runs.

Before each experiment the host records HEAD and whether train.py differs from it. Running `git` for that
ran code the agent chose: `.gitattributes` filters (measured: ~10 CPU-s outside the metered cgroup, and a
filter that hangs made an experiment vanish), hooks, fsmonitor, alternates. Here HEAD is parsed from
`.git/HEAD`, a loose ref or `packed-refs`, ref names are checked, and the commit, its tree and the blob
of train.py are read from loose objects (zlib, size-capped). Everything goes through `HostTree`, so no
link is followed. What this reader cannot see (a packed object, a `.git` file pointing elsewhere, anything
malformed) is None: unknown, never a guess.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from dataclasses import dataclass

from orchestrator.sandbox.hostfs import HostTree

SMALL = 4096                   # HEAD and a loose ref
PACKED_REFS_MAX = 4 << 20
OBJECT_MAX = 4 << 20           # a commit or a tree, inflated
_HEX40 = re.compile(rb"[0-9a-f]{40}")
_REF = re.compile(r"refs/[A-Za-z0-9._+@/-]{1,240}")


@dataclass(frozen=True)
class Head:
    commit: str | None   # 40 hex, or None: no commit yet, or unreadable
    ref: str | None      # e.g. refs/heads/sbx/run-1; None when detached (or unreadable)


def _ref_ok(ref: str) -> bool:
    if not _REF.fullmatch(ref) or ".." in ref or "//" in ref or ref.endswith(("/", ".lock", ".")):
        return False
    return not any(part.startswith(".") for part in ref.split("/"))


def read_head(tree: HostTree, git_dir: str = ".git") -> Head:
    """HEAD of the repository at `git_dir` inside `tree`."""
    head = tree.read_file(f"{git_dir}/HEAD", SMALL)
    if head is None or head.truncated:
        return Head(None, None)
    text = head.data.strip()
    if _HEX40.fullmatch(text):
        return Head(text.decode(), None)
    if not text.startswith(b"ref: "):
        return Head(None, None)
    try:
        ref = text[5:].strip().decode("ascii")
    except UnicodeDecodeError:
        return Head(None, None)
    if not _ref_ok(ref):
        return Head(None, None)
    loose = tree.read_file(f"{git_dir}/{ref}", SMALL)
    if loose is not None:
        value = loose.data.strip()
        return Head(value.decode() if _HEX40.fullmatch(value) and not loose.truncated else None, ref)
    packed = tree.read_file(f"{git_dir}/packed-refs", PACKED_REFS_MAX)
    if packed is not None and not packed.truncated:
        wanted = ref.encode()
        for line in packed.data.splitlines():
            sha, _, name = line.partition(b" ")
            if name.strip() == wanted and _HEX40.fullmatch(sha):
                return Head(sha.decode(), ref)
    return Head(None, ref)  # a branch with no commit yet (or one we cannot read)


def read_object(tree: HostTree, sha: str, git_dir: str = ".git", max_bytes: int = OBJECT_MAX) -> tuple[str, bytes] | None:
    """(type, content) of a loose object, checked against its name; None when absent, packed or malformed."""
    if not _HEX40.fullmatch(sha.encode()):
        return None
    raw = tree.read_file(f"{git_dir}/objects/{sha[:2]}/{sha[2:]}", max_bytes + 4096)
    if raw is None or raw.truncated:
        return None
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(raw.data, max_bytes + 64)
    except zlib.error:
        return None
    if inflater.unconsumed_tail or len(data) > max_bytes + 32:
        return None  # inflates past the cap
    header, nul, body = data.partition(b"\0")
    kind, _, size = header.partition(b" ")
    if not nul or not size.isdigit() or int(size) != len(body) or hashlib.sha1(data).hexdigest() != sha:
        return None
    return kind.decode("ascii", "replace"), body


def _tree_entry(tree_body: bytes, name: bytes) -> tuple[bytes, str] | None:
    """(mode, sha) of `name` in a tree object's content."""
    i = 0
    while i < len(tree_body):
        sp = tree_body.find(b" ", i)
        nul = tree_body.find(b"\0", sp + 1)
        if sp < 0 or nul < 0 or nul + 21 > len(tree_body):
            return None
        mode, entry = tree_body[i:sp], tree_body[sp + 1:nul]
        sha = tree_body[nul + 1:nul + 21].hex()
        if entry == name:
            return mode, sha
        i = nul + 21
    return None


def blob_sha(data: bytes) -> str:
    """The git object id of a file with content `data`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def differs_from_commit(tree: HostTree, commit: str, path: str, data: bytes | None, git_dir: str = ".git") -> bool | None:
    """Whether a top-level file with content `data` (None: absent) differs from `path` in `commit`; None when
    the commit or its tree cannot be read as loose objects."""
    obj = read_object(tree, commit, git_dir)
    if obj is None or obj[0] != "commit":
        return None
    first = obj[1].split(b"\n", 1)[0]
    if not first.startswith(b"tree ") or not _HEX40.fullmatch(first[5:]):
        return None
    root = read_object(tree, first[5:].decode(), git_dir)
    if root is None or root[0] != "tree":
        return None
    entry = _tree_entry(root[1], path.encode())
    if entry is None:
        return data is not None
    if data is None:
        return True
    return entry[0] not in (b"100644", b"100755") or entry[1] != blob_sha(data)


__all__ = ["Head", "blob_sha", "differs_from_commit", "read_head", "read_object"]
