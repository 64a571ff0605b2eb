"""Paired runs from outside the ledger, and transcripts attached to pairs wherever they come from.

- `read_pairs_csv(path)`: a CSV of paired outcomes (one row per pair) from a study made elsewhere.
- `transcripts_in(folder)`: transcripts named by run id (`<run_id>.jsonl.gz`) in a folder.
- `with_evidence(pairs, locate, definitions)`: each pair's two transcripts compared call by call (as the
  definitions declare) and its causes observed, one pair at a time, so transcripts never pile up in memory.

The CSV's columns (a header row; blank cells are "not known"):

| column | meaning |
|---|---|
| `task`, `repeat` | the pair (required) |
| `outcome_a`, `outcome_b` | pass/fail of each run (true/false, pass/fail, 1/0) |
| `score_a`, `score_b` | each run's score (agreement by score) |
| `run_a`, `run_b` | run ids: the transcript files' names |
| `seed` or `seed_a`, `seed_b` | the seeds (one column when both runs share it) |
| `config_a`, `config_b` | each run's config hash |
| `failure_class_a`, `failure_class_b` | infra / agent / unscorable for a failed run |
| `node_a`, `node_b`, `slot_a`, `slot_b` | where each run ran |
| `started_at_a`, `started_at_b` | when it started: unix seconds or ISO 8601 |
| `order_a`, `order_b` | its position in the run order |

At least one outcome pair (`outcome_*` or `score_*`) is required; other columns are ignored.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from orchestrator.diverge.analysis import PairedRuns, RunSide, pair_evidence
from orchestrator.diverge.reader import read_transcript
from orchestrator.failures import DataError, TranscriptError
from orchestrator.specs.diverge import Cause, DivergeDefinitions
from orchestrator.specs.transcript import SUFFIX

#: bounds on an imported CSV
MAX_CSV_BYTES = 64 * 1024 * 1024
MAX_PAIRS = 1_000_000
MAX_CELL = 4096
#: a run id that can name a file: no path separators, no leading dot
RUN_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")

_TRUE = {"true", "t", "yes", "y", "1", "1.0", "pass", "passed"}
_FALSE = {"false", "f", "no", "n", "0", "0.0", "fail", "failed"}
_FAILURES = {"infra", "agent", "unscorable"}


class _Bad(ValueError):
    pass


def _bool(text: str) -> bool:
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise _Bad("true/false (or pass/fail, 1/0)")


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _Bad("a number") from None
    if not math.isfinite(value):
        raise _Bad("a finite number")
    return value


def _int(text: str) -> int:
    value = _float(text)
    if value != round(value):
        raise _Bad("a whole number")
    return int(value)


def _time(text: str) -> float:
    try:
        return _float(text)
    except _Bad:
        pass
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise _Bad("unix seconds or an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise _Bad("a time with its UTC offset (e.g. 2026-11-30T10:00:00+00:00)")
    return moment.timestamp()


def _seed(text: str) -> int | str:
    try:
        return _int(text)
    except _Bad:
        return text


def _run_id(text: str) -> str:
    if not RUN_ID.fullmatch(text):
        raise _Bad("a run id of letters, digits, '.', '_' and '-' (it names a file)")
    return text


def _failure(text: str) -> str:
    if text not in _FAILURES:
        raise _Bad(f"one of {', '.join(sorted(_FAILURES))}")
    return text


_SIDE_COLUMNS: dict[str, Callable[[str], object]] = {
    "run": _run_id,
    "outcome": _bool,
    "score": _float,
    "seed": _seed,
    "config": str,
    "failure_class": _failure,
    "node": str,
    "slot": str,
    "started_at": _time,
    "order": _int,
}
_FIELD = {"run": "run_id", "config": "config_hash", "order": "order"}


def _rows(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if size > MAX_CSV_BYTES:
        raise DataError(f"{path}: {size} bytes, more than {MAX_CSV_BYTES}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a readable UTF-8 file: {exc}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise DataError(f"{path}: empty file") from None
    except csv.Error as exc:
        raise DataError(f"{path}: line 1: {exc}") from None
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise DataError(f"{path}: column {dup!r} appears more than once")
    line = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DataError(f"{path}: line {reader.line_num}: {exc}") from None
        line = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise DataError(f"{path}: line {line}: {len(cells)} cells for {len(header)} columns")
        if any(len(c) > MAX_CELL for c in cells):
            raise DataError(f"{path}: line {line}: a cell longer than {MAX_CELL} characters")
        yield line, {h: c.strip() for h, c in zip(header, cells, strict=True)}


def read_pairs_csv(path: Path | str) -> list[PairedRuns]:
    """Paired runs from a CSV of paired outcomes (columns in the module docstring); errors name file, line
    and column. Pairs come back without comparisons: attach transcripts with `with_evidence`."""
    path = Path(path)
    pairs: list[PairedRuns] = []
    seen: set[tuple[str, int]] = set()
    columns: set[str] | None = None
    for line, row in _rows(path):
        if columns is None:
            columns = set(row)
            missing = [c for c in ("task", "repeat") if c not in columns]
            if missing:
                raise DataError(f"{path}: missing column {', '.join(missing)}")
            if not ({"outcome_a", "outcome_b"} <= columns or {"score_a", "score_b"} <= columns):
                raise DataError(f"{path}: needs outcome_a and outcome_b, or score_a and score_b")
        if len(pairs) >= MAX_PAIRS:
            raise DataError(f"{path}: more than {MAX_PAIRS} pairs")

        def cell(
            name: str, parse: Callable[[str], object], row: dict[str, str] = row, line: int = line
        ) -> object:
            text = row.get(name, "")
            if text == "" or text.lower() in ("na", "nan", "null", "none"):
                return None
            try:
                return parse(text)
            except _Bad as bad:
                raise DataError(
                    f"{path}: line {line}, column {name!r}: expected {bad}, got {text[:80]!r}"
                ) from None

        task = cell("task", str)
        repeat = cell("repeat", _int)
        if task is None or repeat is None:
            raise DataError(f"{path}: line {line}: task and repeat must not be blank")
        key = (str(task), int(repeat))  # type: ignore[call-overload]  # cell() parsed it with _int
        if key in seen:
            raise DataError(f"{path}: line {line}: task {key[0]!r}, repeat {key[1]} appears twice")
        seen.add(key)
        shared_seed = cell("seed", _seed)
        sides = []
        for arm in ("a", "b"):
            values = {
                _FIELD.get(name, name): cell(f"{name}_{arm}", parse) for name, parse in _SIDE_COLUMNS.items()
            }
            if values["seed"] is None:
                values["seed"] = shared_seed
            run_id = values.pop("run_id") or f"{key[0]}#{key[1]}:{arm}"
            # `values` holds RunSide's fields, each parsed by its column's parser
            sides.append(RunSide(str(run_id), **values))  # type: ignore[arg-type]
        pairs.append(PairedRuns(key[0], key[1], sides[0], sides[1]))
    if not pairs:
        raise DataError(f"{path}: no pairs")
    return pairs


def transcripts_in(folder: Path | str) -> Callable[[str], Path | None]:
    """A locator for transcripts named by run id in `folder` (`<run_id>.jsonl.gz`, regular files only)."""
    root = Path(folder)
    if not root.is_dir():
        raise DataError(f"{root}: not a folder of transcripts")

    def locate(run_id: str) -> Path | None:
        if not RUN_ID.fullmatch(run_id):
            return None
        path = root / f"{run_id}{SUFFIX}"
        return path if path.is_file() and not path.is_symlink() else None

    return locate


def with_evidence(
    pairs: Sequence[PairedRuns],
    locate: Callable[[str], Path | None],
    definitions: DivergeDefinitions,
    extra_causes: Sequence[Cause] = (),
    *,
    problems: list[str] | None = None,
) -> list[PairedRuns]:
    """Each pair with both transcripts found, compared as the definitions declare; others unchanged.

    A transcript cut short (a run killed mid-write) is compared up to the cut and the pair is marked
    truncated. A transcript that cannot be read is left out and its error appended to `problems`."""
    out = []
    for pair in pairs:
        path_a, path_b = locate(pair.a.run_id), locate(pair.b.run_id)
        if path_a is None or path_b is None:
            out.append(pair)
            continue
        try:
            a, b = read_transcript(path_a, partial=True), read_transcript(path_b, partial=True)
        except TranscriptError as exc:
            if problems is not None:
                problems.append(f"({pair.task}, {pair.repeat}): {exc}")
            out.append(pair)
            continue
        comparison, causes = pair_evidence(a.calls, b.calls, definitions, extra_causes)
        out.append(replace(pair, comparison=comparison, causes=causes, truncated=a.truncated or b.truncated))
    return out
