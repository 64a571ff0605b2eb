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
