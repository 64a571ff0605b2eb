"""Audit records in the ledger (SQLite): saved, loaded with overrides, history kept."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.compliance.records import AuditRecord, Evidence, EvidenceStep, is_compliant
from orchestrator.compliance.store import add_override, load_records, save_records
from orchestrator.failures import DataError, InvalidLedgerWrite, RunNotFound
from orchestrator.ledger import Ledger


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "ledger.sqlite") as led:
        for _ in range(2):
            led.new_run(task="t", agent="a", budget_name="b")
        yield led


@pytest.fixture
def run1(ledger: Ledger) -> str:
    return ledger.list_runs()[0].run_id


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


def test_tables_follow_the_ledger_rules(ledger: Ledger) -> None:
    conn = sqlite3.connect(ledger.path)
    try:
        for table in ("audits", "audit_overrides", "scores"):
            sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
            assert sql.rstrip().endswith("STRICT"), table
            fks = conn.execute(f"PRAGMA foreign_key_list({table})").fetchall()
            assert [(fk[2], fk[3], fk[4]) for fk in fks] == [("runs", "run_id", "run_id")], table
        types = {r[1]: r[2] for r in conn.execute("PRAGMA table_info(audits)")}
        assert types["created_at"] == "REAL"
    finally:
        conn.close()


def test_save_and_load_round_trip(ledger: Ledger, run1: str) -> None:
    assert save_records(ledger, run1, _records()) == 2
    loaded = load_records(ledger, run1)
    assert [r.rule for r in loaded] == ["eval_labels_in_fit", "frame_statistics"]
    assert loaded[0].run_id == run1
    assert loaded[0].evidence == _records()[0].evidence
    assert loaded[1].notes == ["n"]
    assert load_records(ledger, ledger.list_runs()[1].run_id) == []


def test_records_of_an_unknown_run_are_refused(ledger: Ledger) -> None:
    with pytest.raises(RunNotFound):
        save_records(ledger, "r-nope", _records())


def test_latest_audit_wins(ledger: Ledger, run1: str) -> None:
    save_records(ledger, run1, _records("flagged"))
    save_records(ledger, run1, _records("clear"))
    assert {r.rule: r.verdict for r in load_records(ledger, run1)}["eval_labels_in_fit"] == "clear"
    conn = sqlite3.connect(ledger.path)
    assert conn.execute("SELECT COUNT(*) FROM audits").fetchone()[0] == 4  # history kept
    conn.close()


def test_override_applies_and_survives_reopening(ledger: Ledger, run1: str) -> None:
    save_records(ledger, run1, _records("flagged"))
    assert not is_compliant(load_records(ledger, run1))
    add_override(ledger, run1, "eval_labels_in_fit", "clear", "concat is of two training folds")
    with Ledger(ledger.path, create=False) as reopened:
        records = load_records(reopened, run1)
    record = records[0]
    assert record.verdict == "flagged" and record.final_verdict == "clear"
    assert record.override is not None and record.override.reason == "concat is of two training folds"
    assert is_compliant(records)


def test_latest_override_wins(ledger: Ledger, run1: str) -> None:
    save_records(ledger, run1, _records("flagged"))
    add_override(ledger, run1, "eval_labels_in_fit", "clear", "first look")
    add_override(ledger, run1, "eval_labels_in_fit", "flagged", "second look: it is eval")
    assert load_records(ledger, run1)[0].final_verdict == "flagged"


def test_override_does_not_carry_to_a_new_rule_version(ledger: Ledger, run1: str) -> None:
    save_records(ledger, run1, _records("flagged", version="1"))
    add_override(ledger, run1, "eval_labels_in_fit", "clear", "reviewed under v1")
    save_records(ledger, run1, _records("flagged", version="2"))
    record = load_records(ledger, run1)[0]
    assert record.rule_version == "2" and record.override is None and record.final_verdict == "flagged"


def test_override_needs_an_audit_and_a_reason(ledger: Ledger, run1: str) -> None:
    with pytest.raises(InvalidLedgerWrite, match="no audit"):
        add_override(ledger, run1, "eval_labels_in_fit", "clear", "why")
    save_records(ledger, run1, _records())
    with pytest.raises(ValueError):
        add_override(ledger, run1, "eval_labels_in_fit", "clear", "  ")


def test_record_run_id_must_match(ledger: Ledger, run1: str) -> None:
    record = _records()[0].model_copy(update={"run_id": "run-2"})
    with pytest.raises(DataError):
        save_records(ledger, run1, [record])


def test_database_rejects_bad_verdicts(ledger: Ledger, run1: str) -> None:
    conn = sqlite3.connect(ledger.path)
    try:
        with pytest.raises(sqlite3.IntegrityError), conn:
            conn.execute(
                "INSERT INTO audits (run_id, rule, rule_version, verdict, evidence_json, created_at)"
                " VALUES (?, 'x', '1', 'maybe', '[]', 1.0)", (run1,)
            )
        with pytest.raises(sqlite3.IntegrityError), conn:  # STRICT: a text timestamp is refused
            conn.execute(
                "INSERT INTO audits (run_id, rule, rule_version, verdict, evidence_json, created_at)"
                " VALUES (?, 'x', '1', 'clear', '[]', 'now')", (run1,)
            )
    finally:
        conn.close()
