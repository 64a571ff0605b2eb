"""Carrying one run between ledgers: a node's temporary ledger and the driver's (ledger/transfer.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.compliance.records import AuditRecord
from orchestrator.compliance.store import load_records, save_records
from orchestrator.failures import InvalidLedgerWrite
from orchestrator.ledger import Ledger, RunState, ScoreResult
from tests.ledger.ledger_helpers import drive, plan

S = RunState


def _node_work(node: Ledger, run_id: str) -> None:
    drive(node, run_id, S.DELIVERED)
    node.add_experiment(run_id, status="ok", eval_score=0.7, seconds=1.5)
    node.add_event(run_id, "stop", {"reason": "agent_done"})
    node.update_measurements(run_id, node="n1", slot=0, cpu_seconds_container=1.25)
    node.scores.save(run_id, ScoreResult(dataset="holdout", status="scored", auc=0.66, ap=0.6, n=10, positives=5))
    save_records(node, run_id, [AuditRecord(rule="eval_labels_in_fit", rule_version="1", verdict="clear")])
    node.advance(run_id, S.SCORED)
    node.advance(run_id, S.AUDITED)


def test_round_trip_replaces_the_planned_row(ledger: Ledger, tmp_path: Path) -> None:
    study = ledger.create_study("s1")
    run_id = plan(ledger, study_id=study, repeat=1)
    sent = ledger.transfer.export_run(run_id)
    with Ledger(tmp_path / "node.sqlite") as node:
        node.transfer.import_run(sent)
        assert node.get_run(run_id).status is S.PLANNED
        _node_work(node, run_id)
        back = node.transfer.export_run(run_id)
    json.dumps(back)  # plain values only
    ledger.transfer.import_run(back, base=S.PLANNED)
    record = ledger.run_record_json(run_id)
    assert record["status"] == "audited" and record["counted"] and record["node"] == "n1"
    assert record["experiments_counted"] == 1 and record["experiments"][0]["eval_score"] == 0.7
    kinds = [e["kind"] for e in record["events"]]
    assert kinds.count("transition") == 5 and kinds.count("imported") == 2 and "stop" in kinds
    assert ledger.scores.of_run(run_id)["holdout"].auc == 0.66
    assert [r.verdict for r in load_records(ledger, run_id)] == ["clear"]


def test_a_row_that_moved_is_never_overwritten(ledger: Ledger, tmp_path: Path) -> None:
    run_id = plan(ledger, study_id=ledger.create_study("s2"), repeat=1)
    sent = ledger.transfer.export_run(run_id)
    with Ledger(tmp_path / "node.sqlite") as node:
        node.transfer.import_run(sent)
        _node_work(node, run_id)
        back = node.transfer.export_run(run_id)
    ledger.advance(run_id, S.CANCELLED)  # e.g. another driver took it meanwhile
    with pytest.raises(InvalidLedgerWrite, match="not planned"):
        ledger.transfer.import_run(back, base=S.PLANNED)
    with pytest.raises(InvalidLedgerWrite, match="needs the state"):
        ledger.transfer.import_run(back)
    assert ledger.get_run(run_id).status is S.CANCELLED


def test_the_state_machine_stays_honest(ledger: Ledger, tmp_path: Path) -> None:
    run_id = plan(ledger, study_id=ledger.create_study("s3"), repeat=1)
    sent = ledger.transfer.export_run(run_id)
    with Ledger(tmp_path / "node.sqlite") as node:
        node.transfer.import_run(sent)
        drive(node, run_id, S.FAILED)  # failed as infra: counted = 0
        back = node.transfer.export_run(run_id)
    forged = json.loads(json.dumps(back))
    forged["run"]["status"] = "audited"
    with pytest.raises(InvalidLedgerWrite, match="end at failed"):
        ledger.transfer.import_run(forged, base=S.PLANNED)
    forged = json.loads(json.dumps(back))
    forged["tables"]["events"] = [e for e in forged["tables"]["events"] if '"starting"' not in e["detail_json"]
                                  or '"failed"' in e["detail_json"]]
    with pytest.raises(InvalidLedgerWrite, match="transition from starting"):
        ledger.transfer.import_run(forged, base=S.PLANNED)
    forged = json.loads(json.dumps(back))
    forged["run"]["pairing"] = "other"
    with pytest.raises(InvalidLedgerWrite, match="pairing"):
        ledger.transfer.import_run(forged, base=S.PLANNED)
    ledger.transfer.import_run(back, base=S.PLANNED)
    run = ledger.get_run(run_id)
    assert run.status is S.FAILED and run.failure_class == "infra" and not run.counted


def test_a_retry_keeps_the_receivers_retry_of(ledger: Ledger, tmp_path: Path) -> None:
    first = plan(ledger, study_id=ledger.create_study("s4"), repeat=1)
    drive(ledger, first, S.FAILED)
    second = ledger.retry(first)
    with Ledger(tmp_path / "node.sqlite") as node:
        node.transfer.import_run(ledger.transfer.export_run(second))
        assert node.get_run(second).retry_of is None and node.get_run(second).attempt == 2
        _node_work(node, second)
        back = node.transfer.export_run(second)
    ledger.transfer.import_run(back, base=S.PLANNED)
    assert ledger.get_run(second).retry_of == first and ledger.get_run(second).status is S.AUDITED
