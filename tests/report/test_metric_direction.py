"""A lower-is-better metric ranks the other way everywhere: best-of-k keeps the lowest RMSE, "best" is the
minimum, a gain is a fall, a paired comparison counts the lower mean as better, and the report names the
metric and its direction (never "AUC"). The study is built through the ledger's API, as a real one is.

The higher-is-better figures are those of the mirrored inputs: scores negated, a lower-is-better ranking
gives the same kept artifacts, so every point estimate is the negated one (the gains the same).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orchestrator.compliance.records import AuditRecord
from orchestrator.compliance.store import save_records
from orchestrator.ledger import Ledger, RunState
from orchestrator.ledger.scores import ScoreResult
from orchestrator.report import build_report, validate_runs
from orchestrator.specs.tasktypes import METRICS, direction_words, metric_by_name
from orchestrator.stats import best_of_k, compare_by_task, summarize_runs
from orchestrator.stats.pooled_keep_best import pooled_best_of_k
from orchestrator.study.export import runs_frame
from orchestrator.study.progress import result_table, study_results
from tests.ledger.ledger_helpers import drive

RNG = np.random.default_rng(7)
#: per pairing: (eval RMSE, holdout RMSE, flagged by the eval-label audit) for 8 repeats. Pairing b is
#: better (lower RMSE); one run of b is a rule breaker with the lowest RMSE of all
RUNS = {
    "a/x": [(40.0 + d, 41.0 + d, False) for d in (3.1, 0.4, 2.2, 5.0, 1.7, 4.4, 2.9, 0.9)],
    "b/x": [(35.0 + d, 36.0 + d, False) for d in (2.0, 0.5, 3.3, 1.1, 4.1, 2.6, 0.2, 1.8)]
    + [(20.0, 21.0, True)],
}


def _study(ledger: Ledger) -> str:
    study = ledger.create_study("regression")
    for pairing, rows in RUNS.items():
        for repeat, (ev, hold, flagged) in enumerate(rows, start=1):
            run_id = ledger.new_run(study_id=study, pairing=pairing, agent=pairing.split("/")[0], model="x",
                                    task=f"nyc-{repeat % 2}", budget_name="smoke", repeat=repeat)
            drive(ledger, run_id, RunState.AUDITED)
            ledger.scores.save(run_id, ScoreResult("holdout", "scored", n=500, metric="rmse", score=hold,
                                                  score_se=0.8, eval_score=ev))
            save_records(ledger, run_id, [
                AuditRecord(rule="eval_labels_in_fit", rule_version="1", verdict="flagged" if flagged else "clear"),
                AuditRecord(rule="frame_statistics", rule_version="1", verdict="clear"),
            ])
    return study


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.sqlite", create=True)


def _compliant_holdouts(pairing: str) -> list[float]:
    return [h for _, h, flagged in RUNS[pairing] if not flagged]


def test_the_study_table_gives_the_lowest_rmse_as_best(ledger: Ledger) -> None:
    study = _study(ledger)
    results = study_results(ledger, study)
    for pairing, rows in RUNS.items():
        assert results[pairing]["metric"] == "rmse"
        assert results[pairing]["best_holdout"] == round(min(h for _, h, _ in rows), 4)
    assert result_table("regression", results).splitlines()[0] == "study regression (holdout: rmse (lower is better))"


def test_the_report_ranks_by_the_metrics_direction(ledger: Ledger, tmp_path: Path) -> None:
    runs = validate_runs(runs_frame(ledger, _study(ledger)), source="regression")
    assert set(runs["metric"]) == {"rmse"}
    paths = build_report(runs, tmp_path / "r", seed=3, exclusion="both")
    pairings = pd.read_csv(paths.tables["pairings"]).set_index("pairing")
    for p in RUNS:
        assert pairings.loc[p, "best"] == pytest.approx(min(_compliant_holdouts(p)))
        assert pairings.loc[p, "mean"] == pytest.approx(np.mean(_compliant_holdouts(p)))
    # best of 10 keeps the lowest eval RMSE of the compliant runs nearly always; its gain is a fall in RMSE
    kept = pd.read_csv(paths.tables["best_of_k"]).set_index(["pairing", "k"])
    for p in RUNS:
        holdouts = _compliant_holdouts(p)
        assert kept.loc[(p, 1), "gain_median"] == 0
        assert kept.loc[(p, 10), "median_kept"] == min(holdouts)  # eval and holdout order agree here
        assert kept.loc[(p, 10), "gain_mean"] > 0
        assert kept.loc[(p, 10), "gain_mean"] == pytest.approx(kept.loc[(p, 1), "mean_kept"]
                                                               - kept.loc[(p, 10), "mean_kept"])
    # the rule breaker has the lowest RMSE: the top-N table names it as the best of all scored runs, and
    # the best compliant run is the best of the rest
    top = pd.read_csv(paths.tables["top_runs"])
    row = top[(top["runs"] == "all") & (top["score"] == "holdout_score")].iloc[0]
    assert row["best"] == 21.0 and row["rule_breakers"] == 1
    assert row["best_compliant"] == min(_compliant_holdouts("b/x"))
    # task by task, b's lower RMSE is better on both tasks
    paired = pd.read_csv(paths.tables["paired"]).iloc[0]
    assert (paired["a"], paired["b"], paired["a_better"], paired["b_better"]) == ("a/x", "b/x", 0, 2)
    needed = pd.read_csv(paths.tables["runs_needed"]).iloc[0]
    assert (needed["stronger"], needed["weaker"]) == ("b/x", "a/x")
    assert needed["p_weaker_ahead_r1"] < 0.5  # a's runs have the higher RMSE: rarely ahead
    text = paths.markdown.read_text()
    assert "rmse (lower is better)" in text and "AUC" not in text
    html = paths.html.read_text()
    assert "AUC" not in html


def test_a_report_of_two_metrics_is_refused(tmp_path: Path) -> None:
    runs = pd.DataFrame({"pairing": ["a", "b"], "task": "t", "repeat": [1, 1], "holdout_score": [0.7, 30.0],
                         "metric": ["auc", "rmse"]})
    with pytest.raises(Exception, match=r"2 metrics \(auc, rmse\)"):
        build_report(validate_runs(runs), tmp_path / "r", seed=1)


def test_a_lower_is_better_ranking_is_the_mirror_of_a_higher_is_better_one() -> None:
    groups = []
    for n in (9, 14, 6):
        rank = np.round(RNG.normal(30, 4, n), 1)  # rounded: ties between attempts are kept
        value = rank + RNG.normal(0, 2, n)
        groups.append((rank, value, RNG.random(n) > 0.2))
    lower = pooled_best_of_k(groups, ks=(1, 3, 10), n_resamples=1, seed=5, higher_is_better=False)
    mirrored = pooled_best_of_k([(-r, -v, c) for r, v, c in groups], ks=(1, 3, 10), n_resamples=1, seed=5)
    for lo, hi in zip(lower, mirrored, strict=True):
        assert lo.p_any == hi.p_any
        assert lo.mean_kept == pytest.approx(-hi.mean_kept, abs=1e-9)
        assert lo.oracle_mean_kept == pytest.approx(-hi.oracle_mean_kept, abs=1e-9)
        assert lo.gain_mean == pytest.approx(hi.gain_mean, abs=1e-9)
    rank, value, comp = groups[0]
    for k in (1, 2, 5):
        a = best_of_k(rank, value, comp, k, higher_is_better=False)
        b = best_of_k(-rank, -value, comp, k)
        assert a.mean == pytest.approx(-b.mean, abs=1e-9) and a.p_none == b.p_none
    # k large: the compliant attempt of lowest rank score is kept with probability near 1
    best = best_of_k(rank, value, comp, 200, higher_is_better=False)
    lowest = np.isin(best.values, value[comp][rank[comp] == rank[comp].min()])  # ties share the draw
    assert best.probabilities[lowest].sum() > 0.99
    s = summarize_runs([3.0, 1.0, 2.0], n_resamples=50, seed=1, higher_is_better=False)
    assert s.best == 1.0
    cmp = compare_by_task(["t1", "t2", "t3"], [5.0, 6.0, 7.0], ["t1", "t2", "t3"], [6.0, 5.0, 8.0], seed=1,
                          higher_is_better=False)
    assert (cmp.better, cmp.worse, cmp.mean_difference) == (2, 1, pytest.approx(-1 / 3))


def test_a_metric_name_has_one_direction_in_every_task_type() -> None:
    for name in {m for known in METRICS.values() for m in known}:
        directions = {known[name].direction for known in METRICS.values() if name in known}
        assert directions == {metric_by_name(name).direction}
    assert direction_words("log_loss") == "log_loss (lower is better)"
    assert direction_words("auc") == "auc (higher is better)"
    with pytest.raises(ValueError, match="not one of"):
        metric_by_name("auroc")
