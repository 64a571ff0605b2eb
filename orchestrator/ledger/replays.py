"""Replays in the ledger: one row per `sbx replay` (issue 26), apart from the agent's `model_usage` row.

A replay re-sends stored requests of a run (its gateway transcript) through the gateway; the row keeps what
was replayed (run, call indices, times), where (endpoint, model), under which spend limit, what it cost, the
replays' own transcript in the artifact store, and the summary `sbx replay` printed (distinct responses,
first differences, fingerprints). The agent's usage and cost are never touched.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from orchestrator.ledger.fields import check_finite, dumps_detail
from orchestrator.ledger.parts import LedgerPart

SCHEMA = """
CREATE TABLE replays (
    replay_id          TEXT PRIMARY KEY,
    run_id             TEXT NOT NULL REFERENCES runs(run_id),
    created_at         REAL NOT NULL,
    endpoint           TEXT NOT NULL,
    model              TEXT NOT NULL,
    call_indices       TEXT NOT NULL,
    times              INTEGER NOT NULL CHECK (times >= 1),
    limit_usd          REAL NOT NULL CHECK (limit_usd >= 0),
    calls              INTEGER NOT NULL CHECK (calls >= 0),
    cost_usd           REAL,
    transcript_sha256  TEXT,
    summary            TEXT NOT NULL
) STRICT;
CREATE INDEX replays_by_run ON replays(run_id);
"""


@dataclass(frozen=True)
class ReplayRow:
    replay_id: str
    run_id: str
    created_at: float
    endpoint: str
    model: str
    call_indices: tuple[int, ...]
    times: int
    limit_usd: float
    calls: int
    cost_usd: float | None
    transcript_sha256: str | None
    summary: dict[str, Any]


def save(conn: sqlite3.Connection, row: ReplayRow) -> None:
    conn.execute(
        "INSERT INTO replays (replay_id, run_id, created_at, endpoint, model, call_indices, times, limit_usd, "
        "calls, cost_usd, transcript_sha256, summary) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (row.replay_id, row.run_id, row.created_at, row.endpoint, row.model, json.dumps(list(row.call_indices)),
         row.times, row.limit_usd, row.calls, row.cost_usd, row.transcript_sha256,
         json.dumps(row.summary, separators=(",", ":"))))


def load(conn: sqlite3.Connection, run_id: str) -> list[ReplayRow]:
    rows = conn.execute("SELECT * FROM replays WHERE run_id = ? ORDER BY created_at, replay_id", (run_id,))
    return [ReplayRow(r["replay_id"], r["run_id"], r["created_at"], r["endpoint"], r["model"],
                      tuple(json.loads(r["call_indices"])), r["times"], r["limit_usd"], r["calls"], r["cost_usd"],
                      r["transcript_sha256"], json.loads(r["summary"])) for r in rows]


class ReplaysPart(LedgerPart):
    """`ledger.replays`: the `sbx replay`s of runs' calls (issue 26)."""

    __slots__ = ()

    def save(self, row: ReplayRow) -> None:
        """Store one `sbx replay` of a run's calls: its own row, never the agent's `model_usage`."""
        check_finite("cost_usd", row.cost_usd)
        row = dataclasses.replace(row, summary=json.loads(dumps_detail(row.summary, "a replay's summary")))
        with self._write() as conn:
            self._run_row(conn, row.run_id)
            save(conn, row)

    def of_run(self, run_id: str) -> list[ReplayRow]:
        """The replays of a run's calls, oldest first."""
        with self._read() as conn:
            return load(conn, run_id)
