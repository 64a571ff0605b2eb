"""`study_rows` reads a study set-based and must give each run the row `run_row` gives it (issue 23)."""

from __future__ import annotations

from orchestrator.ledger import Ledger
from orchestrator.run.record import run_row, study_rows

D0, D1, X = "0" * 64, "1" * 64, "f" * 64


def test_study_rows_equal_run_row_of_each_run(ledger: Ledger) -> None:
    study = ledger.create_study("s")
    ids = [ledger.new_run(task="t", agent="a", budget_name="b", pairing="p", study_id=study) for _ in range(3)]
    other = ledger.create_study("other")
    ledger.new_run(task="t", agent="a", budget_name="b", pairing="p", study_id=other)
    ledger.update_measurements(ids[0], delivered_sha256=D0)
    ledger.update_measurements(ids[1], delivered_sha256=D1)
    # run 0: the last in-range score on the delivered file counts; another file's and an out-of-range one do not
    ledger.add_experiment(ids[0], status="ok", n=1, train_sha256=D0, eval_score=0.6)
    ledger.add_experiment(ids[0], status="ok", n=2, train_sha256=D0, eval_score=0.7)
    ledger.add_experiment(ids[0], status="ok", n=3, train_sha256=X, eval_score=0.9)
    ledger.add_experiment(ids[0], status="ok", n=4, train_sha256=D0, eval_score=1.5)
    # run 1: experiments on other files only; run 2 delivered nothing and has a score on no file
    ledger.add_experiment(ids[1], status="ok", n=1, train_sha256=X, eval_score=0.8)
    ledger.add_experiment(ids[2], status="ok", n=1, train_sha256=None, eval_score=0.4)

    rows = study_rows(ledger, study)
    assert rows == [run_row(ledger, i) for i in ids]
    assert [r["eval_score_reported"] for r in rows] == [0.7, None, 0.4]
