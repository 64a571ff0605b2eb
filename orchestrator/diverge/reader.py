"""Read a run's transcript strictly: bounded sizes, every record validated, errors that say where."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import ValidationError

from orchestrator.failures import TranscriptError
from orchestrator.specs.transcript import DEFAULT_LIMITS, CallRecord, TranscriptLimits


@dataclass(frozen=True)
class Transcript:
    """A run's calls in index order (0 .. n-1)."""

    source: str
    calls: tuple[CallRecord, ...]
    #: the file ended early (a run killed mid-write) and `partial=True` kept the complete records
    truncated: bool = False

    def __len__(self) -> int:
        return len(self.calls)


class _LineReader(Protocol):
    """A binary file read line by line (gzip.GzipFile, which is no typing.IO)."""

    def readline(self, size: int = -1, /) -> bytes: ...


@dataclass
class _Cut:
    happened: bool = False
    why: str = field(default="")


def _lines(
    stream: _LineReader, source: str, limits: TranscriptLimits, partial: bool, cut: _Cut
) -> Iterator[tuple[int, bytes]]:
    """Numbered lines, each bounded; a file cut short raises, or with `partial` ends the iteration."""
    total = number = 0
    while True:
        try:
            line = stream.readline(limits.max_record_bytes + 1)
        except EOFError:
            why, line = "the gzip stream ends early", b""
        except (OSError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise TranscriptError(f"{source}: not a readable gzip file: {exc}") from None
        else:
            why = "" if not line or line.endswith(b"\n") else f"line {number + 1} does not end with a newline"
            if len(line) > limits.max_record_bytes:
                raise TranscriptError(
                    f"{source}: line {number + 1} is longer than {limits.max_record_bytes} bytes"
                )
        if why:
            if not partial:
                raise TranscriptError(f"{source}: {why}; a run killed mid-write? (read it with partial=True)")
            cut.happened, cut.why = True, why
            return
        if not line:
            return
        number += 1
        total += len(line)
        if total > limits.max_total_bytes:
            raise TranscriptError(f"{source}: more than {limits.max_total_bytes} bytes uncompressed")
        yield number, line


def parse_records(
    lines: Iterable[tuple[int, bytes]], source: str, limits: TranscriptLimits = DEFAULT_LIMITS
) -> list[CallRecord]:
    """Validate each numbered JSONL line as a CallRecord; the first bad one raises TranscriptError."""
    records: list[CallRecord] = []
    for number, line in lines:
        if len(records) >= limits.max_calls:
            raise TranscriptError(f"{source}: more than {limits.max_calls} calls")
        if not line.strip():
            raise TranscriptError(f"{source}: line {number} is blank")
        try:
            records.append(CallRecord.model_validate_json(line))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(record)'}: {e['msg']}" for e in exc.errors()[:5]
            )
            raise TranscriptError(f"{source}: line {number}: {problems}") from None
    return records


def in_index_order(
    records: Iterable[CallRecord], source: str, *, truncated: bool = False
) -> tuple[CallRecord, ...]:
    """The records sorted by call index, which must run 0 .. n-1 without gaps or repeats.

    In a truncated transcript, calls that finished out of order before the cut may leave a gap: the
    gap-free part before it is kept.
    """
    ordered = sorted(records, key=lambda r: r.index)
    for position, record in enumerate(ordered):
        if record.index == position:
            continue
        if record.index < position:
            raise TranscriptError(f"{source}: call index {record.index} appears twice")
        if truncated:
            return tuple(ordered[:position])
        raise TranscriptError(f"{source}: call index {position} is missing (the next is {record.index})")
    return tuple(ordered)


def read_transcript(
    path: Path, *, limits: TranscriptLimits = DEFAULT_LIMITS, partial: bool = False
) -> Transcript:
    """What calls did this run make? The transcript at `path`, validated and sorted by call index.

    Raises TranscriptError naming the file, the line and the key for any problem. With `partial=True`
    a file cut short (a run killed mid-write) gives the complete records before the cut, without
    gaps in the index, and `truncated=True`.
    """
    source = str(path)
    cut = _Cut()
    try:
        with gzip.open(path, "rb") as stream:
            records = parse_records(_lines(stream, source, limits, partial, cut), source, limits)
    except OSError as exc:
        raise TranscriptError(f"{source}: cannot read: {exc.strerror or exc}") from None
    return Transcript(
        source=source, calls=in_index_order(records, source, truncated=cut.happened), truncated=cut.happened
    )
