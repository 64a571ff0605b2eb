"""Scores in SQLite, one row per (run, dataset). Functions take a connection: the ledger owns it and calls
`ensure_schema` from a migration; `sbx score`/`sbx rescore` open their own file until it lands.

Conventions follow the ledger's (orchestrator/ledger/schema.py): STRICT tables, times in unix seconds
(REAL), booleans INTEGER 0/1 with a CHECK. Saving a pair again replaces it (the latest scoring wins).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import fields
from typing import Any

from orchestrator.scoring.service import ScoreResult

SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    run_id           TEXT NOT NULL,
    dataset          TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('scored', 'unscorable')),
    reason           TEXT,
    detail           TEXT,
    auc              REAL,
    ap               REAL,
    auc_se           REAL,
    n                INTEGER,
    positives        INTEGER,
    seconds          REAL NOT NULL,
    cpu_seconds      REAL,
    train_seconds    REAL,
    predict_seconds  REAL,
    rows_checked     INTEGER,
    rows_changed     INTEGER,
    max_abs_change   REAL,
    tolerance        REAL,
    batch_dependent  INTEGER CHECK (batch_dependent IN (0, 1)),
    batch_rows       INTEGER,
    seed             INTEGER,
    artifact_sha256  TEXT,
    train_sha256     TEXT,
    image            TEXT,
    eval_score       REAL,
    scored_at        REAL NOT NULL,
    PRIMARY KEY (run_id, dataset),
    CHECK ((status = 'scored') = (auc IS NOT NULL)),
    CHECK ((status = 'unscorable') = (reason IS NOT NULL))
) STRICT;
"""

_FIELDS = [f.name for f in fields(ScoreResult)]
_COLUMNS = ["run_id", *_FIELDS, "scored_at"]


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the scores table if it is missing (idempotent)."""
    conn.executescript(SCHEMA)


def save_score(conn: sqlite3.Connection, run_id: str, result: ScoreResult, *, scored_at: float | None = None) -> None:
    """Store (or replace) the score of `run_id` on `result.dataset`."""
    row: dict[str, Any] = {"run_id": run_id, **result.to_json(), "scored_at": scored_at or time.time()}
    if row["batch_dependent"] is not None:
        row["batch_dependent"] = int(row["batch_dependent"])
    names = ", ".join(_COLUMNS)
    marks = ", ".join(f":{c}" for c in _COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS if c not in ("run_id", "dataset"))
    with conn:
        conn.execute(f"INSERT INTO scores ({names}) VALUES ({marks}) "
                     f"ON CONFLICT (run_id, dataset) DO UPDATE SET {updates}", row)


def _result(row: sqlite3.Row | tuple[Any, ...]) -> ScoreResult:
    values = dict(zip(_COLUMNS, row, strict=True))
    if values["batch_dependent"] is not None:
        values["batch_dependent"] = bool(values["batch_dependent"])
    return ScoreResult.from_json(values)


def load_scores(conn: sqlite3.Connection, run_id: str) -> dict[str, ScoreResult]:
    """Every stored score of one run, by dataset."""
    rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM scores WHERE run_id = ? ORDER BY dataset", (run_id,))
    return {r.dataset: r for r in map(_result, rows)}


def scored_at(conn: sqlite3.Connection, run_id: str, dataset: str) -> float | None:
    row = conn.execute("SELECT scored_at FROM scores WHERE run_id = ? AND dataset = ?", (run_id, dataset)).fetchone()
    return None if row is None else float(row[0])


def missing_pairs(conn: sqlite3.Connection, run_ids: Iterable[str], dataset: str) -> list[str]:
    """The runs (in the order given, once each) with no stored score on `dataset`: what a resumed rescore does.
    An `unscorable` score is a finished pair; only pairs whose scoring never completed are missing."""
    done = {r[0] for r in conn.execute("SELECT run_id FROM scores WHERE dataset = ?", (dataset,))}
    out: list[str] = []
    for run_id in run_ids:
        if run_id not in done and run_id not in out:
            out.append(run_id)
    return out


def show_fields(scores: dict[str, ScoreResult]) -> dict[str, Any]:
    """The fields `sbx show RUN --json` gains, from a run's stored scores (None where not scored yet)."""
    h = scores.get("holdout")
    error = None
    if h is not None and h.status == "unscorable":
        first = (h.detail or "").strip().splitlines()
        error = f"{h.reason}: {first[-1]}" if first else h.reason
    return {
        "holdout_auc": h.auc if h else None,
        "holdout_ap": h.ap if h else None,
        "holdout_auc_se": h.auc_se if h else None,
        "batch_dependent": h.batch_dependent if h else None,
        "scoring_error": error,
    }
