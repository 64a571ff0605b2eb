"""Audit records and reviewer overrides in the ledger (SQLite).

Two tables, both append-only so the history of audits and reviews is kept:

    audits           id, run_id, rule, rule_version, verdict, evidence_json, notes_json, file, created_at
    audit_overrides  id, run_id, rule, rule_version, verdict, reason, created_at

`load_records` returns, per rule, the latest audit of a run with the latest override made against that
audit's rule version. An override made against an older version of a rule does not carry over to a
re-audit under a newer version: the rule changed, so the reviewer's judgement has to be made again (the old
override stays in the table).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime

from pydantic import TypeAdapter

from compliance.records import AuditRecord, Evidence, Override, OverrideVerdict
from orchestrator.failures import DataError

SCHEMA = """
CREATE TABLE IF NOT EXISTS audits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    rule TEXT NOT NULL,
    rule_version TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('flagged', 'clear', 'error')),
    evidence_json TEXT NOT NULL,
    notes_json TEXT NOT NULL DEFAULT '[]',
    file TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audits_run_rule ON audits (run_id, rule);
CREATE TABLE IF NOT EXISTS audit_overrides (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    rule TEXT NOT NULL,
    rule_version TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('flagged', 'clear')),
    reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_overrides_run_rule ON audit_overrides (run_id, rule);
"""

_EVIDENCE = TypeAdapter(list[Evidence])


def _now() -> str:
    return datetime.now(UTC).isoformat()


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the audit tables and indexes if they do not exist (safe to call on every open)."""
    with conn:
        conn.executescript(SCHEMA)


def save_records(conn: sqlite3.Connection, run_id: str, records: Iterable[AuditRecord]) -> int:
    """Append one audit row per record for `run_id`; returns how many were written. A record's own run_id,
    if set, must match."""
    rows = []
    for record in records:
        if record.run_id is not None and record.run_id != run_id:
            raise DataError(f"record for run {record.run_id!r} saved under run {run_id!r}")
        rows.append(
            (
                run_id,
                record.rule,
                record.rule_version,
                record.verdict,
                _EVIDENCE.dump_json(record.evidence).decode(),
                json.dumps(record.notes),
                record.file,
                _now(),
            )
        )
    with conn:
        conn.executemany(
            "INSERT INTO audits"
            " (run_id, rule, rule_version, verdict, evidence_json, notes_json, file, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return len(rows)


def add_override(
    conn: sqlite3.Connection, run_id: str, rule: str, verdict: OverrideVerdict, reason: str
) -> Override:
    """Record a reviewer's verdict on the latest audit of (run, rule). There must be an audit to review."""
    override = Override(verdict=verdict, reason=reason)  # validates the verdict and a non-blank reason
    row = conn.execute(
        "SELECT rule_version FROM audits WHERE run_id = ? AND rule = ? ORDER BY id DESC LIMIT 1",
        (run_id, rule),
    ).fetchone()
    if row is None:
        raise DataError(f"no audit of rule {rule!r} for run {run_id!r} to review")
    with conn:
        conn.execute(
            "INSERT INTO audit_overrides (run_id, rule, rule_version, verdict, reason, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, rule, row[0], override.verdict, override.reason, override.at.isoformat()),
        )
    return override


def load_records(conn: sqlite3.Connection, run_id: str) -> list[AuditRecord]:
    """The latest audit of each rule for `run_id`, with its override applied (see the module docstring)."""
    rows = conn.execute(
        "SELECT a.rule, a.rule_version, a.verdict, a.evidence_json, a.notes_json, a.file FROM audits a"
        " WHERE a.run_id = ?"
        " AND a.id = (SELECT MAX(b.id) FROM audits b WHERE b.run_id = a.run_id AND b.rule = a.rule)"
        " ORDER BY a.rule",
        (run_id,),
    ).fetchall()
    records = []
    for rule, version, verdict, evidence_json, notes_json, file in rows:
        override_row = conn.execute(
            "SELECT verdict, reason, created_at FROM audit_overrides WHERE run_id = ? AND rule = ?"
            " AND rule_version = ? ORDER BY id DESC LIMIT 1",
            (run_id, rule, version),
        ).fetchone()
        override = None
        if override_row is not None:
            override = Override(
                verdict=override_row[0], reason=override_row[1], at=datetime.fromisoformat(override_row[2])
            )
        records.append(
            AuditRecord(
                run_id=run_id,
                file=file,
                rule=rule,
                rule_version=version,
                verdict=verdict,
                evidence=_EVIDENCE.validate_json(evidence_json),
                notes=json.loads(notes_json),
                override=override,
            )
        )
    return records
