"""Model usage in the ledger: one row per run that talked to a model through the gateway.

`ModelUsage` is what the gateway measured for the run (calls by outcome, tokens, cost at the rate card in
force on the run's date, the transcript's sha256 in the artifact store), which agent version and endpoint
the run used, and beside it the CLI's own report of its usage (`self_report`, whatever the CLI printed:
never trusted, kept for comparison). The run lifecycle writes it (run/model_attachment.py) when the run's
gateway socket opens and again when it closes; `sbx show`, the export and the report read it through
`run/record.py`.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from orchestrator.failures import InvalidLedgerWrite
from orchestrator.ledger.fields import check_finite, clean_text, dumps_detail
from orchestrator.ledger.parts import LedgerPart
from orchestrator.ledger.state import RunState

#: the gateway's counters, in the order the table holds them
COUNTERS = ("calls", "ok", "refused", "provider_errors", "client_errors", "upstream_timeouts", "usage_missing",
            "unpriced")
TOKENS = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens")

SCHEMA = """
CREATE TABLE model_usage (
    run_id               TEXT PRIMARY KEY REFERENCES runs(run_id),
    endpoint             TEXT NOT NULL,
    api                  TEXT NOT NULL CHECK (api IN ('anthropic', 'openai-chat', 'openai-responses')),
    model                TEXT NOT NULL,
    agent_version        TEXT,
    rate_card_date       TEXT,
    calls                INTEGER NOT NULL DEFAULT 0 CHECK (calls >= 0),
    ok                   INTEGER NOT NULL DEFAULT 0 CHECK (ok >= 0),
    refused              INTEGER NOT NULL DEFAULT 0 CHECK (refused >= 0),
    provider_errors      INTEGER NOT NULL DEFAULT 0 CHECK (provider_errors >= 0),
    client_errors        INTEGER NOT NULL DEFAULT 0 CHECK (client_errors >= 0),
    upstream_timeouts    INTEGER NOT NULL DEFAULT 0 CHECK (upstream_timeouts >= 0),
    usage_missing        INTEGER NOT NULL DEFAULT 0 CHECK (usage_missing >= 0),
    unpriced             INTEGER NOT NULL DEFAULT 0 CHECK (unpriced >= 0),
    input_tokens         INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    cached_input_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (cached_input_tokens >= 0),
    cache_write_tokens   INTEGER NOT NULL DEFAULT 0 CHECK (cache_write_tokens >= 0),
    output_tokens        INTEGER NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    reasoning_tokens     INTEGER NOT NULL DEFAULT 0 CHECK (reasoning_tokens >= 0),
    cost_usd             REAL CHECK (cost_usd >= 0),
    last_outcome         TEXT,
    transcript_sha256    TEXT,
    self_report_json     TEXT NOT NULL DEFAULT '{}',
    closed               INTEGER NOT NULL DEFAULT 0 CHECK (closed IN (0, 1)),
    updated_at           REAL NOT NULL
) STRICT;
"""


@dataclass(frozen=True)
class ModelUsage:
    endpoint: str
    api: str
    model: str
    agent_version: str | None = None
    #: ISO date of the rate card that priced the run (None: no card priced its model)
    rate_card_date: str | None = None
    calls: int = 0               # every call the gateway recorded, refused ones included
    ok: int = 0
    refused: int = 0
    provider_errors: int = 0
    client_errors: int = 0
    upstream_timeouts: int = 0
    usage_missing: int = 0       # forwarded calls whose usage could not be read
    unpriced: int = 0            # calls with usage but no price
    input_tokens: int = 0        # every input token, cached and cache-written ones included
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0       # every output token, reasoning included
    reasoning_tokens: int = 0
    #: USD at the rate card in force on the run's date; None when a call could not be priced
    cost_usd: float | None = None
    last_outcome: str | None = None
    transcript_sha256: str | None = None
    #: the CLI's own report (orchestrator.agents.adapters.SelfReport as a dict); {} when none was read
    self_report: dict[str, Any] = field(default_factory=dict)
    #: the gateway closed the run's socket: the counts are final
    closed: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


_FIELDS = [f.name for f in fields(ModelUsage)]
COLUMNS = ["run_id", *[("self_report_json" if f == "self_report" else f) for f in _FIELDS], "updated_at"]


def save(conn: sqlite3.Connection, run_id: str, usage: ModelUsage, now: float) -> None:
    """Store (or replace) the model usage of `run_id`, inside the caller's transaction."""
    row: dict[str, Any] = {"run_id": run_id, **usage.to_json(), "updated_at": now}
    row["self_report_json"] = json.dumps(row.pop("self_report"), sort_keys=True, allow_nan=False)
    row["closed"] = int(row["closed"])
    names = ", ".join(COLUMNS)
    marks = ", ".join(f":{c}" for c in COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "run_id")
    conn.execute(f"INSERT INTO model_usage ({names}) VALUES ({marks}) "
                 f"ON CONFLICT (run_id) DO UPDATE SET {updates}", row)


def load(conn: sqlite3.Connection, run_id: str) -> ModelUsage | None:
    row = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM model_usage WHERE run_id = ?", (run_id,)).fetchone()
    return None if row is None else usage_of(row)


def usage_of(row: sqlite3.Row) -> ModelUsage:
    """A row of `model_usage` (the columns of COLUMNS) as a ModelUsage."""
    values = {c: row[c] for c in COLUMNS if c not in ("run_id", "updated_at", "self_report_json")}
    values["closed"] = bool(values["closed"])
    return ModelUsage(**values, self_report=json.loads(row["self_report_json"]))


class UsagePart(LedgerPart):
    """`ledger.usage`: what the gateway measured of each run's model calls."""

    __slots__ = ()

    def save(self, run_id: str, usage: ModelUsage) -> None:
        """Store (or replace) what the gateway measured of a run's model calls, and the CLI's own report.
        Allowed in every state but `audited` (the gateway closes a run's socket before its copy-out)."""
        check_finite("cost_usd", usage.cost_usd)
        # the CLI's self-report and its version string are what an agent program printed
        usage = dataclasses.replace(
            usage, self_report=json.loads(dumps_detail(usage.self_report, "the CLI's self-report")),
            agent_version=clean_text(usage.agent_version, 200) if usage.agent_version is not None else None,
            last_outcome=clean_text(usage.last_outcome, 200) if usage.last_outcome is not None else None)
        with self._write() as conn:
            row = self._run_row(conn, run_id)
            if row["status"] == RunState.AUDITED:
                raise InvalidLedgerWrite(f"run {run_id} is audited; its row is final")
            save(conn, run_id, usage, time.time())

    def of_run(self, run_id: str) -> ModelUsage | None:
        """The run's model usage, or None for a run that made no model calls through a gateway."""
        with self._read() as conn:
            return load(conn, run_id)
