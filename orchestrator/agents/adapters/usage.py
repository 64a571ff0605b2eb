"""Bounded, never-raising readers for what agent CLIs print and write about their own usage.

Everything here treats its input as hostile: the CLI runs beside the agent, which may print anything to
the same stream or overwrite the report files. Input is cut at `MAX_BYTES`, lines at `MAX_LINE`, JSON
nesting past the interpreter's recursion limit is a skipped line, and counts are accepted only as non-negative integers below `MAX_COUNT`
(a bool, float, string or negative number is skipped and counted as such).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

MAX_BYTES = 64 * 1024 * 1024
MAX_LINE = 4 * 1024 * 1024
MAX_LINES = 200_000
MAX_COUNT = 10**12
MAX_COST = 1e6


@dataclass
class Tally:
    """Counts skipped input while a parser walks it."""

    skipped: int = 0


def json_lines(data: bytes, tally: Tally) -> Iterator[dict[str, Any]]:
    """The JSON objects among the lines of `data` (other lines, oversized ones and non-objects skipped)."""
    if not isinstance(data, (bytes, bytearray)):
        tally.skipped += 1
        return
    if len(data) > MAX_BYTES:
        tally.skipped += 1
        data = data[-MAX_BYTES:]  # the final report is at the end
    lines = bytes(data).split(b"\n")
    if len(lines) > MAX_LINES:
        tally.skipped += 1
        lines = lines[-MAX_LINES:]
    for raw in lines:
        raw = raw.strip()
        if not raw:
            continue
        if len(raw) > MAX_LINE or not raw.startswith(b"{"):
            tally.skipped += 1
            continue
        obj = loads(raw)
        if obj is None:
            tally.skipped += 1
            continue
        yield obj


def loads(raw: bytes) -> dict[str, Any] | None:
    """A JSON object, or None for anything else (bad JSON, too deep, not an object, bad encoding)."""
    if len(raw) > MAX_BYTES:
        return None
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None



def get(obj: Any, *path: str) -> Any:
    """obj[path[0]][path[1]]... or None when any step is missing or not a mapping."""
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def count(obj: Any, *path: str, tally: Tally | None = None) -> int:
    """A token count at `path`: a non-negative int below MAX_COUNT, else 0 (and a skip when present)."""
    value = get(obj, *path)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_COUNT:
        if tally is not None:
            tally.skipped += 1
        return 0
    return value


def cost(obj: Any, *path: str, tally: Tally | None = None) -> float | None:
    """A cost in USD at `path`: a finite non-negative number below MAX_COST, else None."""
    value = get(obj, *path)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 <= value < MAX_COST:
        if tally is not None:
            tally.skipped += 1
        return None
    return float(value)


def text(obj: Any, *path: str, limit: int = 200) -> str | None:
    value = get(obj, *path)
    return value[:limit] if isinstance(value, str) else None
