"""The viewer's set-based reads give the figures the rest of sbx gives (the study's final table, its status,
the audit verdicts in force), and page through a big ledger without losing or repeating a run."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from orchestrator.failures import LedgerError, LedgerUnavailable
from orchestrator.ledger import Ledger
from orchestrator.ledger.db import connect_read_only
from orchestrator.ledger.schema import MIGRATIONS
from orchestrator.run.record import run_row
from orchestrator.study.progress import study_results, study_status
from orchestrator.study.status import latest_attempts
from orchestrator.view import queries
from orchestrator.view.queries import RunQuery

from .conftest import Built


@pytest.fixture
def conn(built: Built) -> Iterator[sqlite3.Connection]:
    c = connect_read_only(built.home.ledger_path)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def ledger(built: Built) -> Iterator[Ledger]:
    with Ledger(built.home.ledger_path, read_only=True) as led:
        yield led


def _final_table(ledger: Ledger, study_id: str) -> dict[str, dict[str, Any]]:
    """The oracle of the final table: its figures computed in Python from each latest attempt's run row
    (orchestrator/run/record.py `run_row`: its `compliant`, scores and outcome), as `study_results` computed
    them before it became `pairing_results`'s one statement."""
    from orchestrator.specs.tasktypes import metric_by_name

    per: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (_, pairing, _), run in sorted(latest_attempts(ledger.list_runs(study_id=study_id)).items()):
        per[pairing].append(run_row(ledger, run.run_id))
    out: dict[str, dict[str, Any]] = {}
    for pairing, rows in per.items():
        scored = [r for r in rows if r["holdout_score"] is not None]
        scores = [r["holdout_score"] for r in scored]
        metrics = sorted({r["metric"] for r in scored if r["metric"]})
        metric = metrics[0] if len(metrics) == 1 else None
        lower = metric is not None and not metric_by_name(metric).higher_is_better
        best = None if len(metrics) > 1 else min(
            scored, key=lambda r: ((1 if lower else -1) * r["holdout_score"], r["run_id"]), default=None)
        out[pairing] = {
            "runs": len(rows), "scored": len(scores), "failed": sum(r["status"] == "failed" for r in rows),
            "flagged": sum(r["compliant"] is False for r in rows),
            "mean_holdout": round(sum(scores) / len(scores), 4) if scores else None,
            "best_holdout": (round(min(scores) if lower else max(scores), 4)
                             if scores and len(metrics) < 2 else None),
            "metric": metric, "graded": sum(r["outcome"] is not None for r in rows),
            "passed": sum(r["outcome"] is True for r in rows), "best_run": best["run_id"] if best else None,
        }
    return out


def test_pairing_results_are_the_final_tables_figures(built: Built, conn: sqlite3.Connection, ledger: Ledger) -> None:
    for study in (built.ml_study, built.tests_study):
        ours = queries.pairing_results(conn, study)
        assert ours == _final_table(ledger, study)
        assert study_results(ledger, study) == ours  # `sbx study run`'s final table is this statement
    demo = queries.pairing_results(conn, built.ml_study)
    # codex/m1: repeats 1-6, one planned; flagged are #2 and the hostile run (#4's flag was overridden)
    assert demo["codex/m1"]["runs"] == 6 and demo["codex/m1"]["flagged"] == 2
    # claude/m2: the infra failure's retry stands for repeat 5; repeat 4 failed as agent
    assert demo["claude/m2"]["runs"] == 5 and demo["claude/m2"]["failed"] == 1
    assert demo["claude/m2"]["best_holdout"] == pytest.approx(0.78)
    assert demo["claude/m2"]["best_run"] == built.runs["best"]
    bugs = queries.pairing_results(conn, built.tests_study)["codex/m1"]
    assert (bugs["graded"], bugs["passed"], bugs["failed"]) == (4, 2, 1)  # the crash is a fail without grading


def test_pairing_states_are_the_status_table(built: Built, conn: sqlite3.Connection, ledger: Ledger) -> None:
    for study in (built.ml_study, built.tests_study):
        status = study_status(ledger, study)
        assert queries.pairing_states(conn, study) == status["pairings"]
    status = study_status(ledger, built.ml_study)
    assert status["running_runs"] == [built.runs["retry"]]
    assert status["failed_runs"] == [built.runs["failed"]]  # the infra failure's retry stands for it
    assert queries.pairing_states(conn, built.ml_study)["claude/m2"] == {"done": 3, "failed": 1, "running": 1}


def test_studies_count_every_attempt_by_state(built: Built, conn: sqlite3.Connection) -> None:
    lines = {s.name: s for s in queries.studies(conn)}
    assert set(lines) == {"demo", "bugs"}
    # six scored, the overridden, the agent failure, the infra failure and its retry, the planned, the hostile
    assert lines["demo"].attempts == 12
    assert lines["demo"].states["failed"] == 2 and lines["demo"].states["planned"] == 1


def _ids(conn: sqlite3.Connection, **kw: object) -> list[str]:
    return queries.run_page(conn, RunQuery(**kw), size=1000).run_ids  # type: ignore[arg-type]


def test_verdict_filters_are_the_runs_compliance(built: Built, conn: sqlite3.Connection, ledger: Ledger) -> None:
    study = built.ml_study
    flagged, fine = _ids(conn, study_id=study, verdict="flagged"), _ids(conn, study_id=study, verdict="compliant")
    unaudited = _ids(conn, study_id=study, verdict="unaudited")
    # every audited run has a flagged reported-only rule (eval_features_in_fit): it decides nothing
    assert set(flagged) == {built.runs["flagged"], built.runs["hostile"]}
    assert built.runs["overridden"] in fine  # its label rule's flag was overridden as clear
    assert {built.runs["failed"], built.runs["planned"], built.runs["retry"]} <= set(unaudited)
    every = _ids(conn, study_id=study)
    assert len(every) == 12
    for run_id in every:  # each filter is the run's own record's `compliant`
        compliant = run_row(ledger, run_id)["compliant"]
        assert (run_id in flagged, run_id in fine, run_id in unaudited) == (
            compliant is False, compliant is True, compliant is None)


def test_filters_and_sorts(built: Built, conn: sqlite3.Connection, ledger: Ledger) -> None:
    study = built.ml_study
    audited = _ids(conn, study_id=study, state="audited")
    assert {run_row(ledger, r)["status"] for r in audited} == {"audited"} and len(audited) == 8
    claude = _ids(conn, study_id=study, pairing="claude/m2")
    assert {run_row(ledger, r)["pairing"] for r in claude} == {"claude/m2"} and len(claude) == 6
    best = _ids(conn, study_id=study, sort="score")
    scores = [run_row(ledger, r)["holdout_score"] for r in best]
    scored = [s for s in scores if s is not None]
    assert scored == sorted(scored, reverse=True) and scores[: len(scored)] == scored  # unscored last
    assert best[0] == built.runs["best"]
    worst = _ids(conn, study_id=study, sort="-score")
    assert worst[0] == built.runs["hostile"] and len(worst) == len(best)
    with pytest.raises(ValueError, match="sort must be one of"):
        queries.run_page(conn, RunQuery(sort="holdout; DROP TABLE runs"))
    with pytest.raises(ValueError, match="verdict must be one of"):
        queries.run_page(conn, RunQuery(verdict="maybe"))


def test_paging_through_2000_runs_gives_each_once(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as ledger:
        study = ledger.create_study("big")
        made = [ledger.new_run(task="t", agent="a", budget_name="b", pairing=f"p{i % 3}", study_id=study)
                for i in range(2000)]
    with Ledger(path, read_only=True), closing(connect_read_only(path)) as conn:
        first = queries.run_page(conn, RunQuery(study_id=study))
        assert (first.total, first.pages, first.page, len(first.run_ids)) == (2000, 40, 1, queries.PAGE_SIZE)
        seen = [r for page in range(1, 41) for r in queries.run_page(conn, RunQuery(study_id=study, page=page)).run_ids]
        assert seen == made  # oldest first, every run once
        past = queries.run_page(conn, RunQuery(study_id=study, page=99))
        assert past.page == 40 and past.run_ids == made[-queries.PAGE_SIZE:]
        p1 = queries.run_page(conn, RunQuery(study_id=study, pairing="p1", page=14))
        assert (p1.total, p1.pages) == (667, 14) and p1.run_ids == made[1::3][650:]


def test_a_read_only_ledger_cannot_write_or_migrate(built: Built, tmp_path: Path) -> None:
    with Ledger(built.home.ledger_path, read_only=True) as ledger:
        assert ledger.get_study_by_name("demo") is not None
        with pytest.raises((LedgerError, sqlite3.OperationalError), match="readonly"):
            ledger.create_study("new")
    with pytest.raises(LedgerUnavailable, match="no ledger"):
        Ledger(tmp_path / "missing.sqlite", read_only=True)
    assert not (tmp_path / "missing.sqlite").exists()
    old = tmp_path / "old.sqlite"
    Ledger(old, migrations=MIGRATIONS[:-1]).close()
    with pytest.raises(LedgerError, match="not this sbx's"):
        Ledger(old, read_only=True)


def test_a_lower_is_better_metrics_best_is_its_lowest_as_in_the_final_table(tmp_path: Path) -> None:
    """An RMSE study (tasks/nyc-arrival-delay): the viewer's best holdout and best run are the lowest RMSE's,
    exactly as `sbx study run`'s final table has them; a pairing scored in two metrics has no best."""
    from orchestrator.home import Home
    from orchestrator.ledger.records import RunState as S
    from orchestrator.ledger.scores import ScoreResult

    from .conftest import _to

    home = Home(tmp_path / "sbx")
    with Ledger(home.ledger_path) as ledger:
        study = ledger.create_study("rmse", {"seed": 0})
        ids = {}
        for pairing, scored in (("a/m", (("rmse", 41.0), ("rmse", 37.5), ("rmse", 39.0))),
                                ("b/m", (("rmse", 30.0), ("mae", 20.0)))):
            for repeat, (metric, value) in enumerate(scored, start=1):
                run_id = ledger.new_run(task="nyc-arrival-delay", agent=pairing[0], model="m", budget_name="tiny",
                                        pairing=pairing, study_id=study, repeat=repeat)
                _to(ledger, run_id, S.SCORED)
                ledger.scores.save(run_id, ScoreResult(dataset="holdout", status="scored", metric=metric,
                                                      score=value, n=2000, seconds=1.0))
                ids[(pairing, value)] = run_id
        theirs = _final_table(ledger, study)
    with closing(connect_read_only(home.ledger_path)) as conn:
        ours = queries.pairing_results(conn, study)
    assert ours == theirs
    assert ours["a/m"]["best_holdout"] == 37.5 and ours["a/m"]["best_run"] == ids[("a/m", 37.5)]
    assert ours["a/m"]["metric"] == "rmse"
    assert ours["b/m"]["best_holdout"] is None and ours["b/m"]["best_run"] is None and ours["b/m"]["metric"] is None
