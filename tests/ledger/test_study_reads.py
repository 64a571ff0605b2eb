"""Reading a study back set-based (issue 23): `study_rows`, `run_row`, `full_record` and `study_results` give
exactly the rows the per-run path gave (tests/ledger/per_run_record.py, the old code kept as the oracle), on a
ledger of several studies whose runs have and lack scores, audits (re-audits, overrides), experiments,
model usage, gradings, judges and failures; and a study's read costs the same number of SQL statements
whatever its number of runs."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from orchestrator.compliance.traces import RULES
from orchestrator.failures import RunNotFound
from orchestrator.ledger import GradedOutcome, GradingRow, Ledger, ModelUsage, RunState, ScoreResult
from orchestrator.ledger.audits import AuditRow
from orchestrator.ledger.judge_verdicts import JudgeVerdict
from orchestrator.run.record import full_record, run_row, study_rows
from orchestrator.study.progress import study_results
from orchestrator.study.status import latest_attempts
from tests.ledger.ledger_helpers import drive
from tests.ledger.per_run_record import old_full_record, old_run_row

S = RunState
D0, D1, X = "0" * 64, "1" * 64, "f" * 64
R0, R1, R2 = (r.name for r in RULES)
REPORT = {"input_tokens": 1200, "output_tokens": 90, "cost_usd": 0.0123, "calls": 3, "complete": True}


def _audit(rule: str, verdict: str, version: str = "1") -> AuditRow:
    return AuditRow(rule=rule, rule_version=version, verdict=verdict, file="train.py", notes_json='["a note"]',
                    evidence_json='[{"kind": "static_trace", "summary": "eval rows reach fit", "steps": []}]')


def _score(dataset: str, **changes: object) -> ScoreResult:
    values: dict[str, object] = {
        "dataset": dataset, "status": "scored", "auc": 0.71, "ap": 0.3, "auc_se": 0.01, "n": 2000, "positives": 400,
        "eval_score": 0.7, "eval_score_reported": 0.69, "seconds": 3.0, "cpu_seconds": 2.5, "cpu_limit_s": 40.0,
        "rows_checked": 100, "rows_changed": 0, "max_abs_change": 0.0, "batch_dependent": False,
        "withheld_count": 1, "fresh_check": "agreed"}
    return ScoreResult(**{**values, **changes})  # type: ignore[arg-type]


def _usage(complete: bool) -> ModelUsage:
    return ModelUsage(endpoint="anthropic", api="anthropic", model="claude-sonnet-4-5", agent_version="2.1.332",
                      calls=4, ok=3, refused=1, provider_errors=1, input_tokens=1200, cached_input_tokens=800,
                      cache_write_tokens=100, output_tokens=90, reasoning_tokens=30, cost_usd=0.0021945,
                      self_report={**REPORT, "complete": complete}, closed=True)


def _graded(flaky: bool) -> GradedOutcome:
    first = {"t::a": "passed", "t::b": "passed"}
    second = {**first, "t::b": "error"} if flaky else first
    return GradedOutcome(passed=not flaky, reason="tests_failed" if flaky else "passed", agree=not flaky,
                      flaky={"t::b": {"passed": 1, "error": 1}} if flaky else {}, seconds=4.5,
                      fail_to_pass=("t::a",), pass_to_pass=("t::b",),
                      gradings=(GradingRow(1, True, "passed", tests=first),
                                GradingRow(2, not flaky, "tests_failed" if flaky else "passed", tests=second)))


def _judge(run_id: str, judge: str, verdict: str | None) -> JudgeVerdict:
    return JudgeVerdict(run_id, judge, "local", "m", verdict, "ok", 10, False, 5, 1, 0.001, None, 1.0,
                        spec_sha256=f"sha256:{judge}")


def _new(ledger: Ledger, study: str, pairing: str, repeat: int, **meta: object) -> str:
    return ledger.new_run(task="task-a", agent=pairing.split("/")[0], budget_name="smoke", pairing=pairing,
                          model=pairing.partition("/")[2] or None, study_id=study, repeat=repeat,
                          meta={"order": repeat, **meta})


def _ml_study(ledger: Ledger, name: str, repeats: int) -> str:
    """An ml study whose runs cover every kind of row (one run of each kind per 8 repeats)."""
    study = ledger.create_study(name)
    for repeat in range(1, repeats + 1):
        kind = repeat % 8
        run = _new(ledger, study, "claude/opus" if repeat % 2 else "noop", repeat, environment="sha256:env")
        if kind == 0:  # planned only: no rows anywhere else
            continue
        if kind == 1:  # failed as infra, retried; the retry audited with an unscorable holdout
            drive(ledger, run, S.FAILED)
            run = ledger.retry(run)
            drive(ledger, run, S.DELIVERED)
            ledger.scores.save(run, ScoreResult(dataset="holdout", status="unscorable", reason="crashed",
                                               detail="Traceback\n  line 3\nValueError: bad", seconds=1.0))
            drive_on(ledger, run, S.AUDITED)
            continue
        if kind == 2:
            ledger.advance(run, S.CANCELLED)
            continue
        drive(ledger, run, S.RUNNING)
        ledger.update_measurements(run, node=f"n{repeat % 3}", slot=repeat % 4, image="sbx-agent:x",
                                   delivered_sha256={5: None, 7: D1}.get(kind, D0), wall_seconds=60.0 + repeat,
                                   cpu_seconds_metered=50.0, cpu_seconds_container=51.5, commits=2)
        # the last in-range score on the delivered file counts; another file's and an out-of-range one do not
        ledger.add_experiment(run, status="ok", train_sha256=D0, eval_score=0.6 + repeat / 1000, seconds=1.0)
        ledger.add_experiment(run, status="crash", train_sha256=D0, eval_score=None)
        ledger.add_experiment(run, status="ok", train_sha256=X, eval_score=0.9)
        ledger.add_experiment(run, status="refused")
        if kind == 4:
            ledger.add_experiment(run, status="ok", train_sha256=D0, eval_score=1.5)
        if kind == 5:  # delivered nothing: an experiment on no file is the "delivered" one
            ledger.add_experiment(run, status="ok", train_sha256=None, eval_score=0.42)
        if kind in (3, 4):
            ledger.usage.save(run, _usage(complete=kind == 3))
        if kind == 6:  # failed as the agent's: no scores, no audits
            ledger.advance(run, S.FAILED, failure_class="agent", reason="exit 1")
            continue
        ledger.advance(run, S.DELIVERED)
        ledger.scores.save(run, _score("holdout", auc=0.7 + repeat / 1000))
        if kind != 5:
            ledger.scores.save(run, _score("later", auc=0.65, eval_score=None, batch_dependent=None))
        ledger.advance(run, S.SCORED)
        if kind == 7:  # scored, never audited; no experiment on the file it delivered (D1)
            continue
        ledger.audits.save(run, [_audit(R0, "flagged" if kind == 3 else "clear"), _audit(R1, "clear"),
                                 _audit(R2, "flagged")])  # R2 is reported only: it does not decide compliance
        if kind == 3:
            # a reviewer clears rule 0 under version 1, then a re-audit under version 2 flags it again: the
            # override does not carry over; a second override on version 2 is the one in force
            ledger.audits.add_override(run, R0, "clear", "looked: fine")
            ledger.audits.save(run, [_audit(R0, "flagged", "2"), _audit(R1, "error", "2")])
            ledger.audits.add_override(run, R0, "clear", "looked again")
            ledger.audits.add_override(run, R0, "flagged", "on second thought")
            ledger.judges.save(_judge(run, "zeta", "fail"))
            ledger.judges.save(_judge(run, "alpha", None))
        if kind == 4:
            ledger.audits.add_override(run, R1, "flagged", "a copy of the eval file")
            ledger.judges.save(_judge(run, "alpha", "pass"))
        ledger.advance(run, S.AUDITED)
    return study


def drive_on(ledger: Ledger, run_id: str, to: RunState) -> None:
    """From delivered on to `to`, as the lifecycle would."""
    for state in (S.SCORED, S.AUDITED):
        ledger.advance(run_id, state)
        if state is to:
            return


def _tests_study(ledger: Ledger) -> str:
    """A tests task's study: graded runs (one flaky), one ungraded agent failure, one infra failure."""
    study = ledger.create_study("tests-study")
    for repeat in range(1, 5):
        run = _new(ledger, study, "codex/gpt", repeat, task_kind="tests")
        drive(ledger, run, S.RUNNING)
        if repeat == 3:
            ledger.advance(run, S.FAILED, failure_class="agent", reason="crashed")
            continue
        if repeat == 4:
            ledger.advance(run, S.FAILED, failure_class="infra", reason="daemon gone")
            continue
        ledger.advance(run, S.DELIVERED)
        ledger.outcomes.save(run, _graded(flaky=repeat == 2))
        ledger.advance(run, S.SCORED)
        ledger.advance(run, S.AUDITED)
    return study


@pytest.fixture
def studies(ledger: Ledger) -> list[str]:
    ids = [_ml_study(ledger, "ml", 24), _tests_study(ledger), _ml_study(ledger, "ml-2", 9)]
    adhoc = ledger.new_run(task="task-a", agent="noop", budget_name="smoke")
    ledger.add_experiment(adhoc, status="ok", eval_score=0.5)
    return [*ids, "adhoc"]


def test_study_rows_are_the_per_run_rows(ledger: Ledger, studies: list[str]) -> None:
    for study in studies:
        runs = ledger.list_runs(study_id=study)
        rows = study_rows(ledger, study)
        assert [r["run_id"] for r in rows] == [r.run_id for r in runs]  # every attempt, oldest first
        for row, run in zip(rows, runs, strict=True):
            assert row == old_run_row(ledger, run.run_id)
            assert run_row(ledger, run.run_id) == row
            assert full_record(ledger, run.run_id) == old_full_record(ledger, run.run_id)
    # the ledger holds what the rows must show, so the equality above is not between empty rows
    rows = [r for s in studies for r in study_rows(ledger, s)]
    assert {r["compliant"] for r in rows} == {True, False, None}
    assert {r["outcome_reason"] for r in rows} >= {"passed", "tests_failed", "agent_failed"}
    assert {0.42, 0.69} <= {r["eval_score_reported"] for r in rows}  # 0.69: the scorer's retrain printed it
    assert {r[f"{R0}_previous"] for r in rows} == {None, "flagged"}
    assert {r["judge_outcome"] for r in rows} == {None, True}  # alpha's unparsed verdict is None, not zeta's fail
    assert {r["reported_cost_usd"] for r in rows} == {None, 0.0123}
    assert {r["scoring_error"] for r in rows} == {None, "crashed: ValueError: bad"}
    assert {r["gradings_passed"] for r in rows} == {None, 1, 2}


def test_a_missing_run_is_not_found(ledger: Ledger, studies: list[str]) -> None:
    with pytest.raises(RunNotFound):
        run_row(ledger, "r-nope")
    assert study_rows(ledger, "s-nope") == []


def test_study_results_are_over_the_latest_attempts(ledger: Ledger, studies: list[str]) -> None:
    for study in studies:
        latest = latest_attempts(ledger.list_runs(study_id=study))
        per: dict[str, list[dict[str, object]]] = {}
        for (_, pairing, _), run in sorted(latest.items()):
            per.setdefault(pairing, []).append(old_run_row(ledger, run.run_id))
        results = study_results(ledger, study)
        assert list(results) == list(per)
        for pairing, rows in per.items():
            scores = [r["holdout_score"] for r in rows if r["holdout_score"] is not None]
            assert results[pairing]["runs"] == len(rows)
            assert results[pairing]["scored"] == len(scores)
            assert results[pairing]["flagged"] == sum(r["compliant"] is False for r in rows)
            assert results[pairing]["passed"] == sum(r["outcome"] is True for r in rows)
            if scores:
                assert results[pairing]["best_holdout"] == round(max(scores), 4)


@contextmanager
def _statements(ledger: Ledger) -> Iterator[list[str]]:
    seen: list[str] = []
    conn: sqlite3.Connection = ledger._connection()
    conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        conn.set_trace_callback(None)


def test_a_study_costs_the_same_statements_at_any_size(ledger: Ledger) -> None:
    small, large = _ml_study(ledger, "small", 8), _ml_study(ledger, "large", 64)
    with _statements(ledger) as few:
        assert len(study_rows(ledger, small)) == 9  # 8 runs and one retry
    with _statements(ledger) as many:
        assert len(study_rows(ledger, large)) == 72
    assert len(few) == len(many) <= 12  # one per table and the transaction's own


def test_what_the_driver_reads_before_dispatch(ledger: Ledger, studies: list[str]) -> None:
    study = studies[0]
    runs = ledger.list_runs(study_id=study)
    assert ledger.scores.datasets_by_run(study) == {r.run_id: set(ledger.scores.of_run(r.run_id)) for r in runs
                                                    if ledger.scores.of_run(r.run_id)}
    judged = ledger.judges.names_by_run(study)
    assert judged == {r.run_id: {v.judge for v in ledger.judges.of_runs([r.run_id])} for r in runs
                      if ledger.judges.of_runs([r.run_id])}
    assert {"alpha", "zeta"} in judged.values()
    assert ledger.scores.datasets_by_run(studies[1]) == {} and ledger.judges.names_by_run("s-nope") == {}


def test_every_read_is_a_search_on_an_index(ledger: Ledger, studies: list[str]) -> None:
    """Per study or per run, each statement ranges over an index: reading one run of a 100,000-run ledger,
    or one study of many, never scans a whole table."""
    run_id = ledger.list_runs(study_id=studies[0])[3].run_id
    for scope in ({"study_id": studies[0]}, {"run_id": run_id}):
        with _statements(ledger) as seen:
            ledger.run_reads(**scope)
        conn = ledger._connection()
        plans = {sql: [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
                 for sql in seen if sql.startswith("SELECT")}
        assert len(plans) == 9
        for sql, plan in plans.items():
            assert not [step for step in plan if step.startswith("SCAN")], (sql, plan)
