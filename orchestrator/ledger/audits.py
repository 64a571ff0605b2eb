"""Audit records and reviewers' overrides in the ledger, append-only so their history is kept.

    audits           id, run_id, rule, rule_version, verdict, evidence_json, notes_json, file, created_at
    audit_overrides  id, run_id, rule, rule_version, verdict, reason, created_at

`load` returns, per rule, the latest audit of a run with the latest override made against that audit's
rule version. An override made against an older version of a rule does not carry over to a re-audit
under a newer version: the rule changed, so the reviewer's judgement has to be made again (the old
override stays in the table). The ledger stores evidence as JSON text; compliance/store.py turns rows
into AuditRecords and back.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class OverrideRow:
    verdict: str          # flagged | clear
    reason: str
    created_at: float


@dataclass(frozen=True)
class AuditRow:
    rule: str
    rule_version: str
    verdict: str          # flagged | clear | error
    evidence_json: str    # a JSON list
    notes_json: str       # a JSON list of strings
    file: str | None
    created_at: float = 0.0
    override: OverrideRow | None = None


def save(conn: sqlite3.Connection, run_id: str, rows: list[AuditRow], created_at: float) -> None:
    """Append one audit row per record, inside the caller's transaction."""
    conn.executemany(
        "INSERT INTO audits (run_id, rule, rule_version, verdict, evidence_json, notes_json, file, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(run_id, r.rule, r.rule_version, r.verdict, r.evidence_json, r.notes_json, r.file, created_at)
         for r in rows],
    )


def latest_version(conn: sqlite3.Connection, run_id: str, rule: str) -> str | None:
    row = conn.execute("SELECT rule_version FROM audits WHERE run_id = ? AND rule = ? ORDER BY id DESC LIMIT 1",
                       (run_id, rule)).fetchone()
    return None if row is None else str(row[0])


def add_override(conn: sqlite3.Connection, run_id: str, rule: str, rule_version: str, verdict: str, reason: str,
                 created_at: float) -> None:
    conn.execute("INSERT INTO audit_overrides (run_id, rule, rule_version, verdict, reason, created_at)"
                 " VALUES (?, ?, ?, ?, ?, ?)", (run_id, rule, rule_version, verdict, reason, created_at))


def history(conn: sqlite3.Connection, run_id: str) -> list[AuditRow]:
    """Every audit record of `run_id`, oldest first (overrides not attached: see `load`)."""
    rows = conn.execute(
        "SELECT rule, rule_version, verdict, evidence_json, notes_json, file, created_at FROM audits"
        " WHERE run_id = ? ORDER BY id", (run_id,),
    ).fetchall()
    return [AuditRow(r["rule"], r["rule_version"], r["verdict"], r["evidence_json"], r["notes_json"], r["file"],
                     r["created_at"]) for r in rows]


def load(conn: sqlite3.Connection, run_id: str) -> list[AuditRow]:
    """The latest audit of each rule for `run_id`, with its override (see the module docstring)."""
    rows = conn.execute(
        "SELECT a.rule, a.rule_version, a.verdict, a.evidence_json, a.notes_json, a.file, a.created_at,"
        " (SELECT o.id FROM audit_overrides o WHERE o.run_id = a.run_id AND o.rule = a.rule"
        "  AND o.rule_version = a.rule_version ORDER BY o.id DESC LIMIT 1) AS override_id"
        " FROM audits a WHERE a.run_id = ?"
        " AND a.id = (SELECT MAX(b.id) FROM audits b WHERE b.run_id = a.run_id AND b.rule = a.rule)"
        " ORDER BY a.rule",
        (run_id,),
    ).fetchall()
    out = []
    for r in rows:
        override = None
        if r["override_id"] is not None:
            o = conn.execute("SELECT verdict, reason, created_at FROM audit_overrides WHERE id = ?",
                             (r["override_id"],)).fetchone()
            override = OverrideRow(o["verdict"], o["reason"], o["created_at"])
        out.append(AuditRow(r["rule"], r["rule_version"], r["verdict"], r["evidence_json"], r["notes_json"],
                            r["file"], r["created_at"], override))
    return out
