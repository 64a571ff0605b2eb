"""The audit tables against a real SQLite file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from compliance.records import AuditRecord, Evidence, EvidenceStep, is_compliant
from compliance.store import add_override, ensure_schema, load_records, save_records
from orchestrator.failures import DataError


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(tmp_path / "ledger.sqlite")
    try:
        ensure_schema(connection)
        yield connection
    finally:
        connection.close()


def _records(verdict: str = "flagged", version: str = "1") -> list[AuditRecord]:
    step = EvidenceStep(
        file="train.py", line=12, code="model.fit(X_all, y_all)", names=["X_all"], note="train"
    )
    return [
        AuditRecord(
            file="train.py",
            rule="eval_labels_in_fit",
            rule_version=version,
            verdict=verdict,  # type: ignore[arg-type]
            evidence=[Evidence(kind="static_trace", summary="eval reaches fit", steps=[step])],
        ),
        AuditRecord(file="train.py", rule="frame_statistics", rule_version="1", verdict="clear", notes=["n"]),
    ]


def test_schema_is_idempotent(conn: sqlite3.Connection) -> None:
    ensure_schema(conn)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"audits", "audit_overrides"} <= tables
    columns = {r[1] for r in conn.execute("PRAGMA table_info(audits)")}
    assert {"run_id", "rule", "rule_version", "verdict", "evidence_json", "created_at"} <= columns
    columns = {r[1] for r in conn.execute("PRAGMA table_info(audit_overrides)")}
    assert {"run_id", "rule", "verdict", "reason", "created_at"} <= columns


def test_save_and_load_round_trip(conn: sqlite3.Connection) -> None:
    assert save_records(conn, "run-1", _records()) == 2
    loaded = load_records(conn, "run-1")
    assert [r.rule for r in loaded] == ["eval_labels_in_fit", "frame_statistics"]
    assert loaded[0].run_id == "run-1"
    assert loaded[0].evidence == _records()[0].evidence
    assert loaded[1].notes == ["n"]
    assert load_records(conn, "other") == []


def test_latest_audit_wins(conn: sqlite3.Connection) -> None:
    save_records(conn, "run-1", _records("flagged"))
    save_records(conn, "run-1", _records("clear"))
    assert {r.rule: r.verdict for r in load_records(conn, "run-1")}["eval_labels_in_fit"] == "clear"
    assert conn.execute("SELECT COUNT(*) FROM audits").fetchone()[0] == 4  # history kept


def test_override_applies_and_survives_reopening(conn: sqlite3.Connection, tmp_path: Path) -> None:
    save_records(conn, "run-1", _records("flagged"))
    assert not is_compliant(load_records(conn, "run-1"))
    add_override(conn, "run-1", "eval_labels_in_fit", "clear", "concat is of two training folds")
    reopened = sqlite3.connect(tmp_path / "ledger.sqlite")
    try:
        records = load_records(reopened, "run-1")
    finally:
        reopened.close()
    record = records[0]
    assert record.verdict == "flagged" and record.final_verdict == "clear"
    assert record.override is not None and record.override.reason == "concat is of two training folds"
    assert is_compliant(records)


def test_latest_override_wins(conn: sqlite3.Connection) -> None:
    save_records(conn, "run-1", _records("flagged"))
    add_override(conn, "run-1", "eval_labels_in_fit", "clear", "first look")
    add_override(conn, "run-1", "eval_labels_in_fit", "flagged", "second look: it is eval")
    assert load_records(conn, "run-1")[0].final_verdict == "flagged"


def test_override_does_not_carry_to_a_new_rule_version(conn: sqlite3.Connection) -> None:
    save_records(conn, "run-1", _records("flagged", version="1"))
    add_override(conn, "run-1", "eval_labels_in_fit", "clear", "reviewed under v1")
    save_records(conn, "run-1", _records("flagged", version="2"))
    record = load_records(conn, "run-1")[0]
    assert record.rule_version == "2" and record.override is None and record.final_verdict == "flagged"


def test_override_needs_an_audit_and_a_reason(conn: sqlite3.Connection) -> None:
    with pytest.raises(DataError, match="no audit"):
        add_override(conn, "run-1", "eval_labels_in_fit", "clear", "why")
    save_records(conn, "run-1", _records())
    with pytest.raises(ValueError):
        add_override(conn, "run-1", "eval_labels_in_fit", "clear", "  ")


def test_record_run_id_must_match(conn: sqlite3.Connection) -> None:
    record = _records()[0].model_copy(update={"run_id": "run-2"})
    with pytest.raises(DataError):
        save_records(conn, "run-1", [record])


def test_database_rejects_bad_verdicts(conn: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.IntegrityError), conn:
        conn.execute(
            "INSERT INTO audits (run_id, rule, rule_version, verdict, evidence_json, created_at)"
            " VALUES ('r', 'x', '1', 'maybe', '[]', 'now')"
        )
