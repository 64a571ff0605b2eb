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
    "experiments_refused": "add_experiment()",
}


#: 1-based position of the random hex tail in a run id `r-yyyymmddHHMMSS-abcdef`
HEX_AT = len("r-yyyymmddHHMMSS-") + 1


def new_id(prefix: str) -> str:
    """`<prefix>-<yyyymmddHHMMSS UTC>-<6 hex>`: short, unique, sorts by creation second."""
    return f"{prefix}-{datetime.now(UTC):%Y%m%d%H%M%S}-{secrets.token_hex(3)}"


def dumps_object(value: Mapping[str, Any], what: str) -> str:
    try:
        return json.dumps(dict(value), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidLedgerWrite(f"{what} is not a JSON object of finite values: {exc}") from None


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
            and not SHA256.fullmatch(value)
        ):
            raise InvalidLedgerWrite(f"{name} must be a lowercase hex sha256, got {value!r}")


def check_finite(name: str, value: object) -> None:
    """Numbers must be finite (SQLite would store NaN as NULL, silently)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidLedgerWrite(f"{name} must be finite, got {value}")
