"""Unified diffs between two source trees, hunk selection, and a strict applier (pure Python).

The builder makes a task's reference patch from the A->B source diff of the fix files, optionally cut to
some hunks (release diffs mix a fix with refactors); verification applies it to a copy of the repo to make
the oracle's delivery. The applier accepts only what `make_patch` writes (and `diff -u`/git-style
equivalents): every context and removed line must match exactly, or the patch is refused.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    """The patch does not apply, or names a path outside the tree."""


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: tuple[str, ...]   # each starts with ' ', '-' or '+', newline kept


@dataclass(frozen=True)
class FilePatch:
    path: str                # relative posix path
    hunks: tuple[Hunk, ...]
    created: bool = False
    deleted: bool = False


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True) if path.is_file() else []


def _hunks_of(diff: Sequence[str]) -> list[list[str]]:
    hunks: list[list[str]] = []
    for line in diff:
        if line.startswith("@@"):
            hunks.append([line])
        elif hunks:
            hunks[-1].append(line)
    return hunks


def _fix_newline(line: str) -> list[str]:
    return [line] if line.endswith("\n") else [line + "\n", "\\ No newline at end of file\n"]


def make_patch(before: Path, after: Path, files: Iterable[str],
               hunks: Mapping[str, Sequence[int]] | None = None, context: int = 3) -> str:
    """A unified diff (`a/` and `b/` prefixes) of `files` from tree `before` to tree `after`.

    `hunks` keeps only some 1-based hunks of a file, as numbered in the full diff of that file."""
    out: list[str] = []
    for rel in files:
        a, b = _lines(before / rel), _lines(after / rel)
        if a == b:
            continue
        diff = list(difflib.unified_diff(a, b, n=context))
        chosen = _hunks_of(diff)
        wanted = (hunks or {}).get(rel)
        if wanted:
            bad = [i for i in wanted if not 1 <= i <= len(chosen)]
            if bad:
                raise PatchError(f"{rel}: hunks {bad} do not exist (the diff has {len(chosen)})")
            chosen = [chosen[i - 1] for i in wanted]
            chosen = _renumber(chosen)
        out.append(f"--- {'/dev/null' if not a else 'a/' + rel}\n")
        out.append(f"+++ {'/dev/null' if not b else 'b/' + rel}\n")
        for hunk in chosen:
            for line in hunk:
                out.extend(_fix_newline(line))
    return "".join(out)


def count_hunks(before: Path, after: Path, rel: str, context: int = 3) -> int:
    return len(_hunks_of(list(difflib.unified_diff(_lines(before / rel), _lines(after / rel), n=context))))


def _renumber(hunks: list[list[str]]) -> list[list[str]]:
    """New-side start lines after dropping hunks: shift by the net size change of the hunks kept before."""
    out, shift = [], 0
    for hunk in hunks:
        m = _HUNK.match(hunk[0])
        assert m is not None
        o_start, o_len = int(m[1]), int(m[2] or 1)
        n_len = int(m[4] or 1)
        n_start = o_start + shift if o_len else o_start + shift + 1
        out.append([f"@@ -{m[1]}{',' + m[2] if m[2] is not None else ''} +{n_start},{n_len} @@\n", *hunk[1:]])
        shift += n_len - o_len
    return out


def parse_patch(text: str) -> list[FilePatch]:
    """Parse a unified diff; paths must be relative and stay inside the tree."""
    files: list[FilePatch] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        if not lines[i].startswith("--- "):
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise PatchError(f"line {i + 1}: '---' without '+++'")
        old, new = _path(lines[i][4:]), _path(lines[i + 1][4:])
        path = new or old
        if path is None:
            raise PatchError(f"line {i + 1}: no file path")
        i += 2
        hunks: list[Hunk] = []
        while i < len(lines) and lines[i].startswith("@@"):
            m = _HUNK.match(lines[i])
            if not m:
                raise PatchError(f"line {i + 1}: bad hunk header {lines[i].strip()!r}")
            o_len, n_len = int(m[2] if m[2] is not None else 1), int(m[4] if m[4] is not None else 1)
            body: list[str] = []
            i += 1
            seen_old = seen_new = 0
            while i < len(lines) and (seen_old < o_len or seen_new < n_len or lines[i].startswith("\\")):
                line = lines[i]
                if line.startswith("\\"):
                    if body:
                        body[-1] = body[-1].rstrip("\n")
                elif line[:1] in (" ", "-", "+"):
                    body.append(line)
                    seen_old += line[0] in " -"
                    seen_new += line[0] in " +"
                elif line in ("\n", ""):
                    body.append(" \n")   # a blank context line whose leading space was stripped
                    seen_old += 1
                    seen_new += 1
                else:
                    raise PatchError(f"line {i + 1}: unexpected {line[:40]!r} inside a hunk")
                i += 1
            hunks.append(Hunk(int(m[1]), o_len, int(m[3]), n_len, tuple(body)))
        files.append(FilePatch(path, tuple(hunks), created=old is None, deleted=new is None))
    if not files:
        raise PatchError("no file in the patch")
    return files


def _path(field: str) -> str | None:
    name = field.split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        name = name[2:]
    parts = name.split("/")
    if not name or name.startswith("/") or ".." in parts or "" in parts:
        raise PatchError(f"unsafe path in patch: {name!r}")
    return name


def apply_patch(root: Path, text: str) -> list[str]:
    """Apply a unified diff to the tree at `root` in place; returns the paths changed. All-or-nothing per file
    set: every file is checked before any is written."""
    results: dict[str, list[str] | None] = {}
    for fp in parse_patch(text):
        target = root / fp.path
        if target.is_symlink():
            raise PatchError(f"{fp.path}: is a symlink")
        old = [] if fp.created else _lines(target)
        if fp.created and target.exists():
            raise PatchError(f"{fp.path}: exists, the patch creates it")
        if not fp.created and not target.is_file():
            raise PatchError(f"{fp.path}: no such file")
        new: list[str] = []
        pos = 0
        for h in fp.hunks:
            start = max(h.old_start - 1, 0) if h.old_len else h.old_start
            if start < pos:
                raise PatchError(f"{fp.path}: overlapping hunks at line {h.old_start}")
            new.extend(old[pos:start])
            pos = start
            for line in h.lines:
                tag, body = line[0], line[1:]
                if tag in " -":
                    if pos >= len(old) or old[pos] != body:
                        got = old[pos] if pos < len(old) else "<end of file>"
                        raise PatchError(f"{fp.path}:{pos + 1}: expected {body!r}, found {got!r}")
                    pos += 1
                    if tag == " ":
                        new.append(body)
                else:
                    new.append(body)
        new.extend(old[pos:])
        results[fp.path] = None if fp.deleted else new
    for rel, content in results.items():
        target = root / rel
        if content is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(content), encoding="utf-8")
    return list(results)


def diff_stat(text: str) -> tuple[int, int]:
    """(+lines, -lines) of a patch."""
    plus = minus = 0
    for fp in parse_patch(text):
        for h in fp.hunks:
            plus += sum(1 for line in h.lines if line.startswith("+"))
            minus += sum(1 for line in h.lines if line.startswith("-"))
    return plus, minus
