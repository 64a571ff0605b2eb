import sqlite3

import pytest

from orchestrator.scoring.service import ScoreResult
from orchestrator.scoring.store import (
    ensure_schema,
    load_scores,
    missing_pairs,
    save_score,
    scored_at,
    show_fields,
)

SCORED = ScoreResult(dataset="holdout", status="scored", auc=0.71, ap=0.69, auc_se=0.004, n=3000, positives=1500,
                     seconds=12.5, train_seconds=8.0, predict_seconds=3.0, rows_checked=512, rows_changed=0,
                     max_abs_change=0.0, tolerance=1e-6, batch_dependent=False, batch_rows=1000, seed=0,
                     artifact_sha256="a" * 64, train_sha256="b" * 64, image="sbx-scorer:x")
FAILED = ScoreResult(dataset="later", status="unscorable", reason="predict_error",
                     detail="Traceback ...\nKeyError: 'Dest'", seconds=3.0, tolerance=1e-6, batch_rows=1000, seed=0)


@pytest.fixture
def conn():
    c = sqlite3.connect(":memory:")
    ensure_schema(c)
    ensure_schema(c)  # idempotent
    yield c
    c.close()


def test_round_trip_per_run_and_dataset(conn) -> None:
    save_score(conn, "r1", SCORED, scored_at=100.0)
    save_score(conn, "r1", FAILED)
    save_score(conn, "r2", SCORED)
    got = load_scores(conn, "r1")
    assert got == {"holdout": SCORED, "later": FAILED}
    assert got["holdout"].batch_dependent is False
    assert scored_at(conn, "r1", "holdout") == 100.0
    assert load_scores(conn, "nope") == {}


def test_saving_again_replaces(conn) -> None:
    save_score(conn, "r1", SCORED)
    better = ScoreResult(**{**SCORED.to_json(), "auc": 0.75, "batch_dependent": True, "rows_changed": 3})
    save_score(conn, "r1", better)
    assert load_scores(conn, "r1")["holdout"] == better
    assert conn.execute("SELECT count(*) FROM scores").fetchone()[0] == 1


def test_missing_pairs_for_a_resumed_rescore(conn) -> None:
    save_score(conn, "r1", FAILED)            # unscorable on later: finished
    save_score(conn, "r2", SCORED)            # holdout only
    assert missing_pairs(conn, ["r1", "r2", "r3", "r3"], "later") == ["r2", "r3"]
    assert missing_pairs(conn, ["r1", "r2"], "holdout") == ["r1"]


def test_the_schema_refuses_inconsistent_rows(conn) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        save_score(conn, "r1", ScoreResult(dataset="holdout", status="scored", seconds=1.0))
    with pytest.raises(sqlite3.IntegrityError):
        save_score(conn, "r1", ScoreResult(dataset="holdout", status="maybe", seconds=1.0))


def test_show_fields(conn) -> None:
    assert show_fields({}) == {"holdout_auc": None, "holdout_ap": None, "holdout_auc_se": None,
                               "batch_dependent": None, "scoring_error": None}
    assert show_fields({"holdout": SCORED}) == {"holdout_auc": 0.71, "holdout_ap": 0.69, "holdout_auc_se": 0.004,
                                                "batch_dependent": False, "scoring_error": None}
    failed = ScoreResult(**{**FAILED.to_json(), "dataset": "holdout"})
    assert show_fields({"holdout": failed})["scoring_error"] == "predict_error: KeyError: 'Dest'"
