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
import time
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.failures import InvalidLedgerWrite
from orchestrator.ledger.parts import LedgerPart


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


class AuditsPart(LedgerPart):
    """`ledger.audits`: audit records of runs and reviewers' overrides, their history kept."""

    __slots__ = ()

    def save(self, run_id: str, rows: Sequence[AuditRow]) -> None:
        """Append one audit row per rule (the history of audits is kept)."""
        with self._write() as conn:
            self._run_row(conn, run_id)
            save(conn, run_id, list(rows), time.time())

    def latest(self, run_id: str) -> list[AuditRow]:
        """The latest audit of each rule for `run_id`, with the override made against its rule version."""
        with self._read() as conn:
            return load(conn, run_id)

    def history(self, run_id: str) -> list[AuditRow]:
        """Every audit record of `run_id`, oldest first: re-audits under newer rule versions keep the old ones."""
        with self._read() as conn:
            return history(conn, run_id)

    def add_override(self, run_id: str, rule: str, verdict: str, reason: str) -> str:
        """Record a reviewer's verdict on the latest audit of (run, rule); returns the rule version reviewed."""
        if verdict not in ("flagged", "clear"):
            raise InvalidLedgerWrite(f"an override's verdict is flagged or clear, got {verdict!r}")
        if not reason.strip():
            raise InvalidLedgerWrite("an override needs a reason")
        with self._write() as conn:
            self._run_row(conn, run_id)
            version = latest_version(conn, run_id, rule)
            if version is None:
                raise InvalidLedgerWrite(f"no audit of rule {rule!r} for run {run_id!r} to review")
            add_override(conn, run_id, rule, version, verdict, reason, time.time())
        return version
