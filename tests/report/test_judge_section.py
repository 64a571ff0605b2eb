"""The report's judge section (report/judge.py) on a scenario with known verdicts and one-sided errors: its
figures equal a by-hand confusion, scikit-learn's cohen_kappa_score and statsmodels' interval."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from orchestrator.report.build import build_report


def _study() -> pd.DataFrame:
    """Pairing a/x: 20 runs, tests pass 10; the judge passes those and 4 failing ones (misses 4 of 10).
    Pairing b/x: 20 runs, tests pass 6; the judge passes those and 1 failing one (misses 1 of 14)."""
    rows = []
    for pairing, passes, missed in (("a/x", 10, 4), ("b/x", 6, 1)):
        for i in range(20):
            tests = i < passes
            judge = tests or i < passes + missed
            rows.append({"pairing": pairing, "task": f"t{i % 5}", "repeat": i // 5, "outcome": tests,
                         "judge_outcome": judge, "cost_usd": 0.1,
                         "judge_cost_usd": 0.002 if pairing == "a/x" else 0.004})
    return pd.DataFrame(rows)


def test_judge_section_numbers(tmp_path: Path) -> None:
    study = _study()
    paths = build_report(study, tmp_path, seed=0)
    table = pd.read_csv(paths.tables["judge_agreement"]).set_index("pairing")
    a, b, total = table.loc["a/x"], table.loc["b/x"], table.loc["all pairings"]
    assert (a.both_pass, a.false_pass, a.false_fail, a.both_fail) == (10, 4, 0, 6)
    assert (b.both_pass, b.false_pass, b.false_fail, b.both_fail) == (6, 1, 0, 13)
    assert a.false_pass_rate == pytest.approx(0.4) and b.false_pass_rate == pytest.approx(1 / 14)
    assert a.false_fail_rate == 0 and a.agreement == pytest.approx(0.8) and total.agreement == pytest.approx(35 / 40)
    assert a.score_bias == pytest.approx(0.2) and b.score_bias == pytest.approx(0.05)
    for name, row in (("a/x", a), ("b/x", b), (None, total)):
        df = study if name is None else study[study.pairing == name]
        assert row.kappa == pytest.approx(cohen_kappa_score(df.outcome, df.judge_outcome), abs=1e-12)
        ref = cohens_kappa(pd.crosstab(df.outcome, df.judge_outcome).to_numpy())
        assert (row.kappa_low, row.kappa_high) == (pytest.approx(ref.kappa_low), pytest.approx(ref.kappa_upp))
    assert a.cost_per_verdict_usd == pytest.approx(0.002) and total.cost_per_verdict_usd == pytest.approx(0.003)
    gaps = pd.read_csv(paths.tables["judge_gap_bias"]).iloc[0]
    # tests: 0.50 - 0.30 = 0.20; judge: 0.70 - 0.35 = 0.35; the judge overstates the gap by 0.15
    assert (gaps.gap_by_tests, gaps.gap_by_judge, gaps.gap_bias) == (pytest.approx(0.2), pytest.approx(0.35),
                                                                     pytest.approx(0.15))
    print(f"\nkappa a/x {a.kappa:.3f} [{a.kappa_low:.3f}, {a.kappa_high:.3f}], b/x {b.kappa:.3f}, all {total.kappa:.3f}")


def test_judge_only_study_states_no_calibration(tmp_path: Path) -> None:
    study = _study().assign(outcome=None)   # no tests: only the judge's verdicts
    paths = build_report(study, tmp_path, seed=0)
    assert "judge_only" in paths.tables
    text = Path(paths.markdown if hasattr(paths, "markdown") else tmp_path / "summary.md").read_text()
    assert "a model's verdict" in text and "no calibration" in text


def test_runs_that_delivered_nothing_are_counted_apart(tmp_path: Path) -> None:
    """Two runs of a/x and one of b/x delivered nothing (the tests' agent_failed, the judge's not_delivered):
    counted in their own column, out of the agreement and kappa (the same as without them), and a fail by
    both graders in the pass rates, the score bias and the gap."""
    base = _study()
    extra = pd.DataFrame([{"pairing": p, "task": "t0", "repeat": 9 + i, "outcome": False, "outcome_reason": "agent_failed",
                           "judge_outcome": None, "judge_reason": "not_delivered", "cost_usd": 0.1, "judge_cost_usd": None}
                          for i, p in enumerate(("a/x", "a/x", "b/x"))])
    study = pd.concat([base.assign(judge_reason=base.judge_outcome.map({True: "pass", False: "fail"})), extra],
                      ignore_index=True)
    paths = build_report(study, tmp_path / "with", seed=0)
    table = pd.read_csv(paths.tables["judge_agreement"]).set_index("pairing")
    plain = pd.read_csv(build_report(base, tmp_path / "plain", seed=0).tables["judge_agreement"]).set_index("pairing")
    for name, nd in (("a/x", 2), ("b/x", 1), ("all pairings", 3)):
        row, ref = table.loc[name], plain.loc[name]
        assert (row.not_delivered, row.dropped, row.runs) == (nd, 0, ref.runs)
        for col in ("both_pass", "false_pass", "false_fail", "both_fail", "agreement", "kappa", "kappa_low",
                    "false_pass_rate", "false_fail_rate", "cost_per_verdict_usd"):
            assert row[col] == pytest.approx(ref[col]), col
        # as the pairing's score counts its attempts: the runs that delivered nothing fail by both
        df = study if name == "all pairings" else study[study.pairing == name]
        assert row.tests_pass_rate == pytest.approx(df.outcome.astype(bool).mean())
        assert row.judge_pass_rate == pytest.approx(df.judge_outcome.map(lambda v: v is True).mean())
        assert row.score_bias == pytest.approx(row.judge_pass_rate - row.tests_pass_rate)
    # a/x: tests 10/22, judge 14/22; b/x: tests 6/21, judge 7/21
    assert table.loc["a/x", "score_bias"] == pytest.approx(4 / 22) and table.loc["b/x", "score_bias"] == pytest.approx(1 / 21)
    gap = pd.read_csv(paths.tables["judge_gap_bias"]).iloc[0]
    assert gap.gap_by_tests == pytest.approx(10 / 22 - 6 / 21) and gap.gap_by_judge == pytest.approx(14 / 22 - 7 / 21)
    # graded only by the judge: the runs that delivered nothing are counted and fail
    only = build_report(study.assign(outcome=None), tmp_path / "only", seed=0)
    judge_only = pd.read_csv(only.tables["judge_only"]).set_index("pairing")
    assert (judge_only.loc["a/x", "runs"], judge_only.loc["a/x", "not_delivered"]) == (20, 2)
    assert judge_only.loc["a/x", "judge_pass_rate"] == pytest.approx(14 / 22)
    assert judge_only.loc["b/x", "judge_pass_rate"] == pytest.approx(7 / 21)
