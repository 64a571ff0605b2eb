"""Judge-vs-tests agreement (orchestrator/stats/agreement.py) checked against scikit-learn's cohen_kappa_score,
statsmodels' cohens_kappa (its interval) and a confusion counted by hand."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from statsmodels.stats.inter_rater import cohens_kappa

from orchestrator.stats.agreement import Confusion, agreement, gap_bias


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_kappa_and_interval_match_references(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tests = rng.random(300) < 0.4
    judge = np.where(rng.random(300) < 0.85, tests, rng.random(300) < 0.7)
    c = Confusion.of(zip(tests.tolist(), judge.tolist()))
    a = agreement(c)
    assert a.kappa == pytest.approx(cohen_kappa_score(tests, judge), abs=1e-12)
    ref = cohens_kappa(confusion_matrix(tests, judge, labels=[True, False]))
    assert (a.kappa_low, a.kappa_high) == (pytest.approx(ref.kappa_low, abs=1e-12), pytest.approx(ref.kappa_upp, abs=1e-12))
    assert a.agreement == pytest.approx(float(np.mean(tests == judge)))


def test_by_hand_one_sided_errors() -> None:
    # 10 runs: tests pass 4; judge passes those 4 and 2 failing ones (errors go one way)
    pairs = [(True, True)] * 4 + [(False, True)] * 2 + [(False, False)] * 4
    c = Confusion.of(pairs)
    assert (c.both_pass, c.false_pass, c.false_fail, c.both_fail) == (4, 2, 0, 4)
    a = agreement(c)
    # p_o = 0.8; p_e = 0.4*0.6 + 0.6*0.4 = 0.48; kappa = 0.32/0.52
    assert a.agreement == 0.8 and a.kappa == pytest.approx(0.32 / 0.52)
    assert a.false_pass_rate == pytest.approx(2 / 6) and a.false_fail_rate == 0.0
    assert a.bias == pytest.approx(0.2) and a.judge_pass_rate == 0.6 and a.tests_pass_rate == 0.4


def test_gap_bias_and_degenerate() -> None:
    a = Confusion(both_pass=5, false_pass=3, false_fail=0, both_fail=2)   # tests 0.5, judge 0.8
    b = Confusion(both_pass=5, false_pass=1, false_fail=0, both_fail=4)   # tests 0.5, judge 0.6
    assert gap_bias(a, b) == pytest.approx(0.2)
    one = agreement(Confusion(both_pass=7))
    assert one.kappa is None and one.agreement == 1.0 and one.false_pass_rate is None
    with pytest.raises(ValueError):
        agreement(Confusion())


def test_published_figures_are_consistent() -> None:
    """The issue quotes 1,140 runs, 93.8% agreement, kappa 0.70, errors one way (false passes only). Those
    constrain the table: with all 71 disagreements false passes, some tests-pass count gives kappa 0.70 at
    93.8% agreement (the figures are consistent; the per-model rates need the paper's own table)."""
    n, disagree = 1140, round(1140 * (1 - 0.938))
    best = min(range(1, n - disagree), key=lambda tp: abs(
        agreement(Confusion(both_pass=tp, false_pass=disagree, both_fail=n - disagree - tp)).kappa - 0.70))
    a = agreement(Confusion(both_pass=best, false_pass=disagree, both_fail=n - disagree - best))
    assert disagree == 71 and round(a.agreement, 3) == 0.938 and round(a.kappa, 2) == 0.70
    print(f"\npublished: tests pass {best}/{n}, judge false passes {disagree}, kappa {a.kappa:.3f} "
          f"[{a.kappa_low:.3f}, {a.kappa_high:.3f}], bias {a.bias:+.3f}, false-pass rate {a.false_pass_rate:.3f}")
