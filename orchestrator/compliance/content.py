"""The evaluation data recognised by content, not by name (issue 11).

The traces know the evaluation file by its name (`eval.csv`). A copy under another name, a subset of its
rows, its rows appended to the training file, or its rows written out by train.py at run time and read
back are evaluation data all the same. `find_eval_copies` walks a delivered workspace and reports every file
holding rows of the evaluation file: a row matches when its feature values equal those of an evaluation row
that no training row also has (so a copy of the training file never matches), read as

- delimited text of any name or suffix (`,` `;` tab `|`; columns by the header's names when it has them,
  else in the evaluation file's order; numbers compared by value, so `1200` and `1200.0` match), including
  text inside a `.py` or config file (a block of CSV lines in a string), and gzip, bz2 or xz compressed text;
- Parquet and Feather / Arrow files, when pyarrow is installed (the `parquet` extra); otherwise they are
  listed as not checked.

Not covered, and said so in the result: pickles and joblib files (reading them means running them), NumPy
arrays (no column names; encoded features do not equal the raw rows), rows re-encoded in another text form
(JSON records, Python tuples). Every read is bounded (entries walked, bytes per file, bytes in all) and never
follows a link. The workspace's own `data/eval.csv`, when it is the pristine file, is the evaluation file,
not a copy.
"""

from __future__ import annotations

import bz2
import csv
import functools
import gzip
import hashlib
import io
import lzma
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

#: fewer matching rows than this is not taken as a copy (chance agreement of whole rows is far rarer)
MIN_ROWS = 5
MAX_ENTRIES = 20_000
MAX_FILE_BYTES = 64 << 20
MAX_TOTAL_BYTES = 512 << 20
_DELIMITERS = (",", "\t", ";", "|")
_SKIPPED_DIRS = frozenset({".git", "__pycache__"})
_UNREADABLE = {b"\x80": "a pickle", b"\x93NUMPY": "a NumPy array", b"PK\x03\x04": "a zip archive (e.g. joblib, npz)"}


@dataclass(frozen=True)
class EvalCopy:
    path: str               # relative to the workspace
    rows: int               # rows of the evaluation file found in it
    labels: bool            # whether it holds the label column too
    how: str                # "text", "gzip text", "parquet", ...

    def sentence(self) -> str:
        with_labels = "with their labels" if self.labels else "without labels"
        return f"{self.path} holds {self.rows:,} rows of the evaluation file ({with_labels}; found by content)"


@dataclass
class ContentScan:
    copies: list[EvalCopy] = field(default_factory=list)
    #: files that could hold evaluation rows but were not read (why)
    unchecked: list[tuple[str, str]] = field(default_factory=list)
    files_read: int = 0
    bytes_read: int = 0

    def notes(self) -> list[str]:
        out = [c.sentence() for c in self.copies]
        if self.unchecked:
            shown = ", ".join(f"{p} ({why})" for p, why in self.unchecked[:5])
            more = f" and {len(self.unchecked) - 5} more" if len(self.unchecked) > 5 else ""
            out.append(f"not checked for evaluation rows: {shown}{more}")
        return out


def _norm(value: str) -> str:
    """A field as compared: quotes and spaces stripped, numbers by value (`1200`, `1200.0`, `01200`)."""
    value = value.strip()
    if value[:1] in ("'", '"'):
        value = value.strip("'\"").strip()
    if value.isdigit():
        return value.lstrip("0") or "0"
    if not value or not (value[0].isdigit() or value[0] in "-+."):
        return value
    try:
        number = float(value)
    except ValueError:
        return value
    if number != number or number in (float("inf"), float("-inf")):
        return value
    return str(int(number)) if number.is_integer() else repr(number)


def _key(values: Sequence[str]) -> bytes:
    return hashlib.blake2b("\x1f".join(_norm(v) for v in values).encode(), digest_size=12).digest()


@dataclass(frozen=True)
class EvalRows:
    """The evaluation file's rows as keys of their feature values (those no training row shares)."""

    features: tuple[str, ...]
    target: str
    keys: frozenset[bytes]
    raw: bytes
    label_values: frozenset[str] = frozenset()
    #: the training file's bytes: a workspace file equal to it holds no evaluation row (not read)
    train_raw: bytes = b""

    @classmethod
    def read(cls, eval_csv: Path, train_csv: Path, target: str) -> EvalRows:
        """The keys of `eval_csv` less those of `train_csv` (made once per pair of files and their mtimes)."""
        return _eval_rows(eval_csv.resolve(), eval_csv.stat().st_mtime, train_csv.resolve(),
                          train_csv.stat().st_mtime, target)

    @classmethod
    def _read(cls, eval_csv: Path, train_csv: Path, target: str) -> EvalRows:
        raw = eval_csv.read_bytes()
        header, rows = _csv_rows(raw.decode("utf-8"))
        features = tuple(c for c in header if c != target)
        at = [header.index(c) for c in features]
        keys = {_key([r[i] for i in at]) for r in rows if len(r) == len(header)}
        t_header, t_rows = _csv_rows(train_csv.read_bytes().decode("utf-8"))
        if all(c in t_header for c in features):
            t_at = [t_header.index(c) for c in features]
            keys -= {_key([r[i] for i in t_at]) for r in t_rows if len(r) == len(t_header)}
        labels = frozenset(_norm(r[header.index(target)]) for r in rows[:1000]) if target in header else frozenset()
        return cls(features=features, target=target, keys=frozenset(keys), raw=raw, label_values=labels,
                   train_raw=train_csv.read_bytes())


@functools.lru_cache(maxsize=4)
def _eval_rows(eval_csv: Path, eval_mtime: float, train_csv: Path, train_mtime: float, target: str) -> EvalRows:
    del eval_mtime, train_mtime  # part of the cache key only
    return EvalRows._read(eval_csv, train_csv, target)


def _csv_rows(text: str, delimiter: str = ",") -> tuple[list[str], list[list[str]]]:
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = next(reader, [])
    return [h.strip() for h in header], [r for r in reader if r]


def _match_text(text: str, ev: EvalRows) -> tuple[int, bool]:
    """Rows of `text` (delimited lines, anywhere in it) that are evaluation rows; whether labels are there.
    Lines after a header take their columns by name; others are tried at every offset, in the evaluation
    file's column order (an index column first, or a prefix in a string literal, does not hide them)."""
    lines = text.splitlines()
    n = len(ev.features)
    best = (0, False)
    for delimiter in _DELIMITERS:
        if not any(line.count(delimiter) >= n - 1 for line in lines[:2000]):
            continue
        positions: list[int] | None = None
        label_at: int | None = None
        hits, labels = 0, False
        for line in lines:
            if line.count(delimiter) < n - 1:
                continue
            fields = [f.strip().strip('"').strip("'") for f in line.split(delimiter)]
            if all(c in fields for c in ev.features):  # a header: the columns by their names from here on
                positions = [fields.index(c) for c in ev.features]
                label_at = fields.index(ev.target) if ev.target in fields else None
                continue
            if positions is not None and max(positions) < len(fields):
                if _key([fields[i] for i in positions]) in ev.keys:
                    hits += 1
                    labels = labels or label_at is not None
                continue
            for start in range(len(fields) - n + 1):
                if _key(fields[start:start + n]) in ev.keys:
                    hits += 1
                    labels = labels or (len(fields) > start + n and _norm(fields[start + n]) in ev.label_values)
                    break
        best = max(best, (hits, labels))
    return best


def _match_table(columns: dict[str, list[object]], ev: EvalRows) -> tuple[int, bool]:
    if not all(c in columns for c in ev.features):
        return 0, False
    cols = [columns[c] for c in ev.features]
    hits = sum(_key([str(v) for v in row]) in ev.keys for row in zip(*cols, strict=False))
    return hits, ev.target in columns


def _read_bounded(path: Path, limit: int) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return f.read(limit)


def _decompress(data: bytes, limit: int) -> tuple[bytes, str] | None:
    for magic, module, name in ((b"\x1f\x8b", gzip, "gzip"), (b"BZh", bz2, "bz2"), (b"\xfd7zXZ", lzma, "xz")):
        if data.startswith(magic):
            try:
                with module.open(io.BytesIO(data)) as f:
                    return f.read(limit), f"{name} text"
            except (OSError, EOFError, ValueError, lzma.LZMAError):
                return None
    return None


def _arrow_table(data: bytes) -> dict[str, list[object]] | None:
    try:
        import pyarrow.feather as feather
        import pyarrow.parquet as pq
    except ImportError:
        return None
    try:
        table = pq.read_table(io.BytesIO(data)) if data[:4] == b"PAR1" else feather.read_table(io.BytesIO(data))
    except Exception:  # noqa: BLE001 - a damaged or hostile file is simply not a table
        return {}
    return {name: table.column(name).to_pylist() for name in table.column_names}


def _walk(root: Path) -> Iterator[tuple[str, Path, int]]:
    stack: list[tuple[Path, PurePosixPath]] = [(root, PurePosixPath())]
    seen = 0
    while stack:
        folder, rel = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                return
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name not in _SKIPPED_DIRS:
                    stack.append((Path(entry.path), rel / entry.name))
            elif stat.S_ISREG(st.st_mode):
                yield str(rel / entry.name), Path(entry.path), st.st_size


def find_eval_copies(root: Path | None, ev: EvalRows, *, extra: Iterable[tuple[str, bytes]] = (),
                     min_rows: int = MIN_ROWS) -> ContentScan:
    """Every file under `root` (and each (path, bytes) of `extra`) that holds at least `min_rows` rows of the
    evaluation file (see the module docstring for what is read and how)."""
    scan = ContentScan()
    budget = MAX_TOTAL_BYTES

    def check(rel: str, data: bytes, size: int) -> None:
        nonlocal budget
        if (rel == "data/eval.csv" and data == ev.raw) or data == ev.train_raw:
            return  # the evaluation file itself, or a pristine training file (no evaluation row in it)
        scan.files_read += 1
        scan.bytes_read += len(data)
        budget -= len(data)
        how = "text"
        unpacked = _decompress(data, MAX_FILE_BYTES)
        if unpacked is not None:
            data, how = unpacked
        if data[:4] == b"PAR1" or data[:6] == b"ARROW1":
            table = _arrow_table(data)
            if table is None:
                scan.unchecked.append((rel, "Parquet/Arrow without pyarrow installed"))
                return
            hits, labels = _match_table(table, ev)
            how = "parquet" if data[:4] == b"PAR1" else "arrow"
        else:
            for magic, what in _UNREADABLE.items():
                if data.startswith(magic):
                    scan.unchecked.append((rel, what))
                    return
            if b"\0" in data[:8192]:
                return  # binary of another kind: no rows of text in it
            hits, labels = _match_text(data.decode("utf-8", errors="replace"), ev)
        if size > len(data) and how == "text":
            scan.unchecked.append((rel, f"only its first {MAX_FILE_BYTES >> 20} MB were read"))
        if hits >= min_rows:
            scan.copies.append(EvalCopy(rel, hits, labels, how))

    for rel, data in extra:
        check(rel, data, len(data))
    if root is not None and root.is_dir():
        for rel, path, size in _walk(root):
            if budget <= 0:
                scan.unchecked.append((rel, f"past {MAX_TOTAL_BYTES >> 20} MB read in all"))
                continue
            head = _read_bounded(path, min(MAX_FILE_BYTES, budget))
            if head:
                check(rel, head, size)
    return scan
