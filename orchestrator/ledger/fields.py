"""What the ledger accepts in its rows: ids, JSON columns, and the measurement fields of a run."""

from __future__ import annotations

import json
import math
import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from orchestrator.failures import InvalidLedgerWrite

SHA256 = re.compile(r"[0-9a-f]{64}")

#: fields update_measurements accepts: name -> accepted Python types (None always clears)
MEASUREMENTS: dict[str, tuple[type, ...]] = {
    "stop_reason": (str,),
    "wall_seconds": (int, float),
    "cpu_seconds_metered": (int, float),
    "cpu_seconds_container": (int, float),
    "delivered_sha256": (str,),
    "commits": (int,),
    "image": (str,),
    "resources": (dict,),
    "node": (str,),
    "slot": (int,),
    "container_id": (str,),
    "agent_exit_code": (int,),
    "artifact_manifest": (str,),
    "meta": (dict,),
}
#: columns with a single writer elsewhere, named in the error when someone tries to set them directly
OWNED = {
    "status": "advance()",
    "failure_class": "advance()",
    "failure_reason": "advance()",
    "counted": "advance()",
    "started_at": "advance()",
    "ended_at": "advance()",
    "experiments_counted": "add_experiment()",
    "experiments_refused": "add_experiment() and add_refusals()",
}


#: 1-based position of the random hex tail in a run id `r-yyyymmddHHMMSS-abcdef`
HEX_AT = len("r-yyyymmddHHMMSS-") + 1
#: the hex tail as SQL, spelled exactly as the `runs_by_hex_tail` index spells it (SQLite uses an
#: expression index only for the identical expression)
HEX_TAIL = f"substr(run_id, {HEX_AT})"


def short_run_id(run_id: str) -> str:
    """The run id's random hex tail: what people type (`sbx show abc123`, `sbx view`'s /run/abc123); the
    ledger finds a run by it (`Ledger.find_run`, on the hex-tail index)."""
    return run_id[HEX_AT - 1:] if run_id.startswith("r-") and len(run_id) > HEX_AT else run_id


def prefix_range(prefix: str) -> tuple[str, str | None]:
    """Bounds [low, high) of the strings that start with `prefix`, for a range query on an index.

    `high` is the prefix with its last character stepped up (SQLite's BINARY collation compares UTF-8
    bytes, which order as code points do); None when no string is above every extension of the prefix.
    """
    stem = prefix
    while stem and stem[-1] == chr(0x10FFFF):
        stem = stem[:-1]
    if not stem:
        return prefix, None
    return prefix, stem[:-1] + chr(ord(stem[-1]) + 1)


def new_id(prefix: str) -> str:
    """`<prefix>-<yyyymmddHHMMSS UTC>-<6 hex>`: short, unique, sorts by creation second."""
    return f"{prefix}-{datetime.now(UTC):%Y%m%d%H%M%S}-{secrets.token_hex(3)}"


def dumps_object(value: Mapping[str, Any], what: str) -> str:
    try:
        return json.dumps(dict(value), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidLedgerWrite(f"{what} is not a JSON object of finite values: {exc}") from None


#: characters kept of one agent-controlled string (a note, a reason, a value in an event's detail)
TEXT_LIMIT = 2000
#: nesting kept of an event's detail or a run's meta; deeper values are replaced by a marker
JSON_DEPTH = 8
#: bytes of one event's detail as JSON; a larger detail is replaced by its head and its size
DETAIL_BYTES = 64 << 10
_SURROGATES = re.compile("[\ud800-\udfff]")


def clean_text(value: object, limit: int | None = TEXT_LIMIT) -> str:
    """`value` as text SQLite and every reader can store and show: valid UTF-8 (bytes decoded with
    replacement, lone surrogates replaced), no NUL, at most `limit` characters (the cut is marked)."""
    if isinstance(value, bytes | bytearray | memoryview):
        text = bytes(value).decode("utf-8", "replace")
    else:
        text = value if isinstance(value, str) else str(value)
    text = _SURROGATES.sub("\ufffd", text).replace("\x00", "\ufffd")
    if limit is not None and len(text) > limit:
        cut = len(text) - limit
        text = f"{text[:limit]}...[{cut} more characters]"
    return text


def clean_json(value: Any, limit: int | None = TEXT_LIMIT, depth: int = JSON_DEPTH) -> Any:
    """A JSON-ready copy of `value` with every string (keys too) through `clean_text`, non-finite floats as
    text, containers nested at most `depth` deep, and anything else as its text."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str | bytes | bytearray):
        return clean_text(value, limit)
    if isinstance(value, Mapping | list | tuple):
        if depth <= 0:
            return "[nested too deep]"
        if isinstance(value, Mapping):
            return {clean_text(k, limit): clean_json(v, limit, depth - 1) for k, v in value.items()}
        return [clean_json(v, limit, depth - 1) for v in value]
    return clean_text(value, limit)


def dumps_detail(value: Mapping[str, Any], what: str) -> str:
    """An event's detail (or any object that carries agent-controlled values) as bounded JSON text."""
    text = dumps_object(clean_json(dict(value)), what)
    if len(text) > DETAIL_BYTES:
        text = dumps_object({"truncated": True, "bytes": len(text), "head": text[:4000]}, what)
    return text


def check_measurements(fields: Mapping[str, Any]) -> None:
    """Raise InvalidLedgerWrite naming the first field that is unknown, owned elsewhere, or mistyped."""
    for name, value in fields.items():
        if name not in MEASUREMENTS:
            if name in OWNED:
                raise InvalidLedgerWrite(f"{name} is not a measurement; it is written by {OWNED[name]}")
            raise InvalidLedgerWrite(
                f"unknown run field {name!r}; measurements are: {', '.join(sorted(MEASUREMENTS))}"
            )
        types = MEASUREMENTS[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, types)):
            wanted = " or ".join(t.__name__ for t in types)
            raise InvalidLedgerWrite(f"{name} must be {wanted} or None, got {type(value).__name__}")
        check_finite(name, value)
        if (
            name in ("delivered_sha256", "artifact_manifest")
            and value is not None
            and not (isinstance(value, str) and SHA256.fullmatch(value))  # str: MEASUREMENTS checked it
        ):
            raise InvalidLedgerWrite(f"{name} must be a lowercase hex sha256, got {value!r}")


def check_finite(name: str, value: object) -> None:
    """Numbers must be finite (SQLite would store NaN as NULL, silently)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidLedgerWrite(f"{name} must be finite, got {value}")
