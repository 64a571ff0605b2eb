"""Scores in the ledger: one row per (run, dataset), replaced when scored again, refused when inconsistent."""

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.failures import RunNotFound
from orchestrator.ledger import Ledger, ScoreResult
from orchestrator.run.record import run_row

SCORED = ScoreResult(dataset="holdout", status="scored", auc=0.71, ap=0.69, auc_se=0.004, n=3000, positives=1500,
                     seconds=12.5, train_seconds=8.0, predict_seconds=3.0, rows_checked=512, rows_changed=0,
                     max_abs_change=0.0, tolerance=1e-6, batch_dependent=False, batch_rows=1000, seed=0,
                     artifact_sha256="a" * 64, train_sha256="b" * 64, image="sbx-scorer:x")
FAILED = ScoreResult(dataset="later", status="unscorable", reason="predict_error",
                     detail="Traceback ...\nKeyError: 'Dest'", seconds=3.0, tolerance=1e-6, batch_rows=1000, seed=0)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "ledger.sqlite") as led:
        yield led


@pytest.fixture
def runs(ledger: Ledger) -> list[str]:
    return [ledger.new_run(task="t", agent="a", budget_name="b") for _ in range(3)]


def test_round_trip_per_run_and_dataset(ledger: Ledger, runs: list[str]) -> None:
    r1, r2, _ = runs
    ledger.scores.save(r1, SCORED)
    ledger.scores.save(r1, FAILED)
    ledger.scores.save(r2, SCORED)
    got = ledger.scores.of_run(r1)
    assert got == {"holdout": SCORED, "later": FAILED}
    assert got["holdout"].batch_dependent is False
    assert ledger.scores.of_run(runs[2]) == {}


def test_saving_again_replaces(ledger: Ledger, runs: list[str]) -> None:
    ledger.scores.save(runs[0], SCORED)
    better = ScoreResult(**{**SCORED.to_json(), "auc": 0.75, "batch_dependent": True, "rows_changed": 3})
    ledger.scores.save(runs[0], better)
    assert ledger.scores.of_run(runs[0])["holdout"] == better
    conn = sqlite3.connect(ledger.path)
    assert conn.execute("SELECT count(*) FROM scores").fetchone()[0] == 1
    conn.close()


def test_runs_with_a_score_for_a_resumed_rescore(ledger: Ledger, runs: list[str]) -> None:
    r1, r2, _ = runs
    ledger.scores.save(r1, FAILED)            # unscorable on later: finished
    ledger.scores.save(r2, SCORED)            # holdout only
    assert ledger.scores.runs_scored_on("later") == {r1}
    assert ledger.scores.runs_scored_on("holdout") == {r2}


def test_the_schema_refuses_inconsistent_rows(ledger: Ledger, runs: list[str]) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        ledger.scores.save(runs[0], ScoreResult(dataset="holdout", status="scored", seconds=1.0))
    with pytest.raises(sqlite3.IntegrityError):
        ledger.scores.save(runs[0], ScoreResult(dataset="holdout", status="maybe", seconds=1.0))
    with pytest.raises(RunNotFound):
        ledger.scores.save("r-unknown", SCORED)
    assert ledger.scores.of_run(runs[0]) == {}  # a refused write leaves nothing behind


def test_the_run_record_reads_the_scores(ledger: Ledger, runs: list[str]) -> None:
    row = run_row(ledger, runs[0])
    assert (row["holdout_score"], row["holdout_ap"], row["holdout_score_se"], row["scoring_error"]) == (None,) * 4
    ledger.scores.save(runs[0], SCORED)
    row = run_row(ledger, runs[0])
    assert (row["holdout_score"], row["holdout_ap"], row["holdout_score_se"]) == (0.71, 0.69, 0.004)
    assert row["batch_dependent"] is False and row["holdout_negatives"] == 1500
    ledger.scores.save(runs[1], ScoreResult(**{**FAILED.to_json(), "dataset": "holdout"}))
    assert run_row(ledger, runs[1])["scoring_error"] == "predict_error: KeyError: 'Dest'"


def test_the_metric_columns_round_trip_and_old_rows_become_auc(tmp_path: Path) -> None:
    from orchestrator.ledger import MIGRATIONS

    path = tmp_path / "old.sqlite"
    cut = [m.name for m in MIGRATIONS].index("scores_metric")  # later migrations come after it
    with Ledger(path, migrations=MIGRATIONS[:cut]) as old:  # a ledger from before the metric columns
        run = old.new_run(task="t", agent="a", budget_name="b")
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO scores (run_id, dataset, status, auc, auc_se, n, seconds, scored_at) "
                      "VALUES (?, 'holdout', 'scored', 0.71, 0.004, 3000, 1.0, 0.0)", (run,))
        conn.execute("INSERT INTO scores (run_id, dataset, status, reason, seconds, scored_at) "
                     "VALUES (?, 'later', 'unscorable', 'oom', 1.0, 0.0)", (run,))
        conn.commit()
        conn.close()
    with Ledger(path) as led:
        got = led.scores.of_run(run)
        assert (got["holdout"].metric, got["holdout"].score, got["holdout"].score_se) == ("auc", 0.71, 0.004)
        assert (got["later"].metric, got["later"].score) == (None, None)
        rmse = ScoreResult(dataset="holdout", status="scored", metric="rmse", score=12.5, score_se=0.3, n=900)
        led.scores.save(run, rmse)
        assert led.scores.of_run(run)["holdout"] == rmse


def test_the_json_form_is_every_field() -> None:
    """`to_json` reads the fields without `asdict`'s deep copy; it is the same dict."""
    import dataclasses

    result = ScoreResult(dataset="holdout", status="scored", auc=0.7, n=10, positives=3, withheld_json="[]",
                         batch_dependent=False, metric="auc", score=0.7)
    assert result.to_json() == dataclasses.asdict(result)
    assert list(result.to_json()) == [f.name for f in dataclasses.fields(ScoreResult)]
