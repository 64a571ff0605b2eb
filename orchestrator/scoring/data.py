"""The data of a scoring, read on the host: pristine train/eval files and a hidden set's features and labels.

The features are kept as raw CSV lines so each batch reaches predict_proba exactly as a raw read of the
file would; the labels never leave this process. The evaluation and training files' rows join the scored
set's in one row space (`RowSpace`), as feature lines without the label column: the evaluation rows give
the eval score sbx computes, and training rows make one of the batch check's contexts.
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from orchestrator.failures import DataError
from orchestrator.scoring.batches import Layout
from orchestrator.scoring.tasktypes import TaskScoring

DATASETS = ("holdout", "later")
TRAIN, EVAL = "train.csv", "eval.csv"


@dataclass(frozen=True)
class HiddenSet:
    name: str
    header: bytes           # the features file's header line, with its newline
    lines: tuple[bytes, ...]  # one data line per row, with newlines
    labels: np.ndarray      # same order: 0/1 (binary), class indices (multiclass), floats (regression)

    @property
    def n(self) -> int:
        return len(self.lines)

    def batch_csv(self, rows: np.ndarray) -> bytes:
        return self.header + b"".join(self.lines[i] for i in rows)


def _header(path: Path) -> list[str]:
    try:
        with open(path, "rb") as f:
            return f.readline().decode("utf-8").strip().split(",")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None


def pristine_files(data_dir: Path) -> dict[str, Path]:
    """data/train.csv and data/eval.csv of the scored repo, from the prepared folder."""
    files = {name: data_dir / name for name in (TRAIN, EVAL)}
    for path in files.values():
        if not path.is_file():
            raise DataError(f"{path}: missing; run `sbx data prepare` first")
    return files


@functools.lru_cache(maxsize=4)
def _load(features: Path, labels: Path, mtimes: tuple[float, float], scoring: TaskScoring,
          train_columns: tuple[str, ...]) -> HiddenSet:
    del mtimes  # part of the cache key only
    try:
        raw = features.read_bytes()
    except OSError as exc:
        raise DataError(f"{features}: cannot read ({exc.strerror})") from None
    lines = raw.splitlines(keepends=True)
    if not lines:
        raise DataError(f"{features}: empty file")
    header, body = lines[0], [ln if ln.endswith(b"\n") else ln + b"\n" for ln in lines[1:] if ln.strip()]
    if not header.endswith(b"\n"):
        header += b"\n"
    columns = header.decode("utf-8", errors="replace").strip().split(",")
    expected = [c for c in train_columns if c != scoring.target]
    if columns != expected:
        raise DataError(f"{features}: columns {columns} differ from train.csv's features {expected}")
    y = scoring.read_labels(labels)
    if len(y) != len(body):
        raise DataError(f"{features}: {len(body)} lines but {labels.name} has {len(y)} labels "
                        f"(a quoted field spanning lines is not supported)")
    return HiddenSet(name=features.name.split(".")[0], header=header, lines=tuple(body), labels=y)


def load_hidden(data_dir: Path, dataset: str, *, target: str = "dep_delayed_15min", positive: str = "Y",
                negative: str = "N", scoring: TaskScoring | None = None) -> HiddenSet:
    """`<dataset>.features.csv` and `<dataset>.labels.csv` of a prepared folder, checked against train.csv.
    `scoring` says how the labels read (target, type, label values); without it, binary by the arguments."""
    scoring = scoring or TaskScoring(target=target, positive=positive, negative=negative)
    target = scoring.target
    if dataset not in DATASETS:
        raise DataError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    features, labels = data_dir / f"{dataset}.features.csv", data_dir / f"{dataset}.labels.csv"
    for path in (features, labels):
        if not path.is_file():
            raise DataError(f"{path}: missing; run `sbx data prepare` first")
    train_columns = tuple(_header(pristine_files(data_dir)[TRAIN]))
    if target not in train_columns:
        raise DataError(f"{data_dir / TRAIN}: no label column {target!r}")
    hidden = _load(features.resolve(), labels.resolve(), (features.stat().st_mtime, labels.stat().st_mtime),
                   scoring, train_columns)
    return HiddenSet(name=dataset, header=hidden.header, lines=hidden.lines, labels=hidden.labels)


@dataclass(frozen=True)
class LabelledRows:
    """A labelled data file's rows as feature lines (the label column removed) and its labels as 0/1."""

    header: bytes
    lines: tuple[bytes, ...]
    labels: np.ndarray


@functools.lru_cache(maxsize=8)
def _labelled(path: Path, mtime: float, scoring: TaskScoring) -> LabelledRows:
    del mtime  # part of the cache key only
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text") from None
    target = scoring.target
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or target not in rows[0]:
        raise DataError(f"{path}: no label column {target!r}")
    at = rows[0].index(target)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    lines, labels = [], []
    for i, row in enumerate(rows):
        if i and not any(field.strip() for field in row):
            continue
        if len(row) != len(rows[0]):
            raise DataError(f"{path}: line {i + 1} has {len(row)} fields, the header {len(rows[0])}")
        if i:
            labels.append(row[at])
        out.seek(0)
        out.truncate()
        writer.writerow(row[:at] + row[at + 1:])
        lines.append(out.getvalue().encode("utf-8"))
    return LabelledRows(header=lines[0], lines=tuple(lines[1:]), labels=scoring.labels(labels, str(path)))


def labelled_rows(path: Path, *, target: str = "dep_delayed_15min", positive: str = "Y", negative: str = "N",
                  scoring: TaskScoring | None = None) -> LabelledRows:
    """The rows of data/train.csv or data/eval.csv as feature lines, with their labels (kept on the host)
    as `scoring` reads them (without it: binary, by the arguments)."""
    if not path.is_file():
        raise DataError(f"{path}: missing; run `sbx data prepare` first")
    scoring = scoring or TaskScoring(target=target, positive=positive, negative=negative)
    return _labelled(path.resolve(), path.stat().st_mtime, scoring)


@dataclass(frozen=True)
class RowSpace:
    """Every row a scoring may send, numbered as `layout` says: scored, then eval, then train."""

    header: bytes
    lines: tuple[bytes, ...]
    layout: Layout

    def batch_csv(self, ids: np.ndarray) -> bytes:
        return self.header + b"".join(self.lines[i] for i in ids)


def row_space(hidden: HiddenSet, eval_rows: LabelledRows | None, train_rows: LabelledRows | None) -> RowSpace:
    """The scored set's rows, then the evaluation file's and the training file's (each when given)."""
    lines = list(hidden.lines)
    for name, extra in (("eval.csv", eval_rows), ("train.csv", train_rows)):
        if extra is None:
            continue
        if extra.header != hidden.header:
            raise DataError(f"{name}: its feature columns {extra.header!r} differ from the {hidden.name} set's "
                            f"{hidden.header!r}")
        lines += extra.lines
    layout = Layout(hidden.n, len(eval_rows.lines) if eval_rows else 0, len(train_rows.lines) if train_rows else 0)
    return RowSpace(header=hidden.header, lines=tuple(lines), layout=layout)
