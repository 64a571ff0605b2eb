"""Pass/fail outcomes in the ledger (ledger/outcomes.py): a run's verdict, every grading and every expected
test, replaced whole on regrading, refused when impossible, carried to and from fleet nodes, and read by the
one run record (an agent failure on a tests task counts as a fail)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from orchestrator.failures import InvalidLedgerWrite, RunNotFound
from orchestrator.ledger import GradedOutcome, GradingRow, Ledger, RunState
from orchestrator.run.record import full_record, run_row
from tests.ledger.ledger_helpers import drive, plan

S = RunState
F2P = ("tests/test_a.py::test_bug",)
P2P = ("tests/test_a.py::test_ok", "tests/test_b.py::TestX::test_y[1-a]")


def _outcome(passed: bool = False, flaky: bool = False) -> GradedOutcome:
    first = {F2P[0]: "passed" if passed else "failed", P2P[0]: "passed", P2P[1]: "passed"}
    second = {**first, P2P[1]: "error"} if flaky else first
    reason = "passed" if passed and not flaky else "tests_failed"
    return GradedOutcome(
        passed=passed and not flaky, reason=reason, detail="1 of 1 fail_to_pass did not pass", agree=not flaky,
        flaky={P2P[1]: {"passed": 1, "error": 1}} if flaky else {}, tree={"copied": 3, "removed": {"protected": 1}},
        image="sbx-task:abc", seconds=4.5, fail_to_pass=F2P, pass_to_pass=P2P,
        gradings=(GradingRow(1, passed, "passed" if passed else "tests_failed", "d1", 0 if passed else 1, False, None,
                             2.0, first),
                  GradingRow(2, passed and not flaky, reason, "d2", 1, False, None, 2.5, second)))


def test_saved_read_back_and_replaced_whole(ledger: Ledger) -> None:
    run_id = plan(ledger, task="t")
    assert ledger.outcomes.of_run(run_id) is None
    flaky = _outcome(passed=True, flaky=True)
    ledger.outcomes.save(run_id, flaky)
    assert ledger.outcomes.of_run(run_id) == flaky
    again = _outcome(passed=True)
    ledger.outcomes.save(run_id, again)  # a regrading replaces every row of the run
    assert ledger.outcomes.of_run(run_id) == again
    assert ledger.outcomes.passed([run_id, "r-missing"]) == {run_id: True}
    summary = again.summary()
    assert summary["repeats"] == 2 and "fail_to_pass" not in summary
    assert summary["gradings"][0] == {"repeat": 1, "passed": True, "reason": "passed", "detail": "d1", "exit_code": 0,
                                      "timed_out": False, "reward": None, "seconds": 2.0, "fail_to_pass_passed": 1,
                                      "fail_to_pass": 1, "pass_to_pass_passed": 2, "pass_to_pass": 2}


def test_the_tables_refuse_what_cannot_be(ledger: Ledger) -> None:
    with pytest.raises(RunNotFound):
        ledger.outcomes.save("r-nope", _outcome())
    run_id = plan(ledger, task="t")
    bad = _outcome()
    bad_test = GradedOutcome(**{**bad.__dict__, "gradings": (GradingRow(1, False, "tests_failed", tests={F2P[0]: "won"}),)})
    with pytest.raises(InvalidLedgerWrite, match="outcome"):
        ledger.outcomes.save(run_id, bad_test)
    with pytest.raises(InvalidLedgerWrite, match="outcome"):
        ledger.outcomes.save(run_id, GradedOutcome(passed=False, reason=" "))
    assert ledger.outcomes.of_run(run_id) is None  # nothing half-written
    with sqlite3.connect(ledger.path) as conn:
        strict = {r[0]: r[1] for r in conn.execute("SELECT name, strict FROM pragma_table_list")}
        assert strict["outcomes"] == strict["gradings"] == strict["test_results"] == 1


def test_carried_to_and_from_a_node(ledger: Ledger, tmp_path: Path) -> None:
    run_id = plan(ledger, task="t")
    sent = ledger.transfer.export_run(run_id)
    with Ledger(tmp_path / "node.db") as node:
        node.transfer.import_run(sent)
        drive(node, run_id, S.SCORED)
        node.outcomes.save(run_id, _outcome(passed=True, flaky=True))
        back = node.transfer.export_run(run_id)
    assert len(back["tables"]["test_results"]) == 6 and len(back["tables"]["gradings"]) == 2
    ledger.transfer.import_run(back, base=S.PLANNED)
    assert ledger.outcomes.of_run(run_id) == _outcome(passed=True, flaky=True)


def test_the_run_record_reads_the_outcome_and_counts_an_agent_failure_as_a_fail(ledger: Ledger) -> None:
    graded = plan(ledger, task="t", repeat=1)
    drive(ledger, graded, S.SCORED)
    ledger.outcomes.save(graded, _outcome(passed=False))
    row = run_row(ledger, graded)
    assert (row["outcome"], row["outcome_reason"], row["grade_repeats"], row["gradings_passed"]) == (
        False, "tests_failed", 2, 0)
    assert row["gradings_agree"] is True and row["flaky_tests"] == 0
    record = full_record(ledger, graded)
    assert record["grading"]["reason"] == "tests_failed"
    assert {(t["repeat"], t["test"], t["outcome"]) for t in record["test_results"]} >= {(1, F2P[0], "failed"),
                                                                                         (2, P2P[1], "passed")}
    crashed = plan(ledger, task="t", repeat=2, meta={"task_kind": "tests"})
    ledger.advance(crashed, S.STARTING)
    ledger.advance(crashed, S.RUNNING)
    ledger.advance(crashed, S.FAILED, failure_class="agent", reason="agent_crashed: exit 1")
    assert (run_row(ledger, crashed)["outcome"], run_row(ledger, crashed)["outcome_reason"]) == (False, "agent_failed")
    ml = plan(ledger, task="flight-delays", repeat=3)
    ledger.advance(ml, S.STARTING)
    ledger.advance(ml, S.RUNNING)
    ledger.advance(ml, S.FAILED, failure_class="agent", reason="agent_crashed: exit 1")
    assert run_row(ledger, ml)["outcome"] is None  # an ml task has no pass/fail outcome
    infra = plan(ledger, task="t", repeat=4, meta={"task_kind": "tests"})
    ledger.advance(infra, S.FAILED, failure_class="infra", reason="daemon gone")
    assert run_row(ledger, infra)["outcome"] is None  # our failure says nothing about the agent
