import math

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from orchestrator.stats import (
    clopper_pearson_interval,
    cohen_kappa,
    cost_per_solved_task,
    discordant_pairs,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_curves,
    pass_hat_k,
    wilson_interval,
)


def test_published_pass_at_k_and_pass_hat_k() -> None:
    # n = 10 runs, c = 7 passes, k = 3
    assert round(pass_at_k(10, 7, 3), 3) == 0.992
    assert round(pass_hat_k(10, 7, 3), 3) == 0.292


@pytest.mark.parametrize("n", [1, 2, 5, 10, 37, 90])
def test_pass_at_k_matches_exact_combinatorics(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            at = 1.0 - math.comb(n - c, k) / math.comb(n, k)
            hat = math.comb(c, k) / math.comb(n, k)
            assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-10)
            assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-10)


def test_pass_at_k_is_vectorised_and_averages_per_task() -> None:
    n = np.array([10, 10, 4, 2])
    c = np.array([7, 0, 4, 1])
    per_task = pass_at_k(n, c, 3)
    assert np.isnan(per_task[3])  # two runs cannot say anything about k = 3
    avg = mean_pass_at_k(n, c, 3)
    assert avg.tasks == 3 and avg.dropped == 1
    assert avg.value == pytest.approx((1 - 1 / 120 + 0 + 1) / 3)
    hat = mean_pass_hat_k(n, c, 3)
    assert hat.value == pytest.approx((35 / 120 + 0 + 1) / 3)


def test_pass_curves_are_monotone() -> None:
    at, hat = pass_curves([10, 10, 10], [2, 5, 9], [1, 2, 3, 5, 10])
    assert np.all(np.diff(at) >= 0) and np.all(np.diff(hat) <= 0)
    assert at[0] == pytest.approx(hat[0]) == pytest.approx(16 / 30)


@pytest.mark.parametrize(
    "bad", [{"n": 5, "c": 6, "k": 1}, {"n": 5, "c": 2, "k": 0}, {"n": -1, "c": 0, "k": 1}]
)
def test_pass_at_k_rejects_bad_counts(bad: dict) -> None:
    with pytest.raises(ValueError):
        pass_at_k(**bad)


def test_published_wilson_interval() -> None:
    low, high = wilson_interval(238, 280)
    assert (round(low, 3), round(high, 3)) == (0.803, 0.887)


@pytest.mark.parametrize("x,n", [(0, 10), (1, 10), (5, 10), (10, 10), (238, 280), (3, 1000)])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_intervals_match_statsmodels(x: int, n: int, confidence: float) -> None:
    alpha = 1 - confidence
    w = wilson_interval(x, n, confidence)
    assert w == pytest.approx(proportion_confint(x, n, alpha=alpha, method="wilson"), abs=1e-9)
    cp = clopper_pearson_interval(x, n, confidence)
    assert cp == pytest.approx(proportion_confint(x, n, alpha=alpha, method="beta"), abs=1e-9)
    ci = sps.binomtest(x, n).proportion_ci(confidence_level=confidence, method="exact")
    assert cp == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_intervals_are_vectorised() -> None:
    low, high = wilson_interval([1, 2, 3], [10, 10, 10])
    assert low.shape == (3,) and np.all(np.diff(low) > 0) and np.all(high > low)


def test_interval_input_errors() -> None:
    with pytest.raises(ValueError, match="exceed"):
        wilson_interval(11, 10)
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson_interval(1, 10, confidence=1.5)


def test_published_mcnemar() -> None:
    assert round(mcnemar_exact(23, 21), 3) == 0.880


@pytest.mark.parametrize("b,c", [(0, 0), (0, 5), (3, 9), (23, 21), (40, 12), (1, 1)])
def test_mcnemar_matches_statsmodels_and_binomtest(b: int, c: int) -> None:
    ref = mcnemar(np.array([[10, b], [c, 10]]), exact=True).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(ref, abs=1e-12)
    if b + c:
        assert mcnemar_exact(b, c) == pytest.approx(sps.binomtest(b, b + c, 0.5).pvalue, abs=1e-12)


def test_discordant_pairs() -> None:
    assert discordant_pairs([1, 1, 0, 0, 1], [1, 0, 1, 0, 0]) == (2, 1)


def test_cohen_kappa_matches_statsmodels_and_sklearn() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(1)
    tests = rng.random(200) < 0.6
    judge = np.where(rng.random(200) < 0.8, tests, ~tests)
    ours = cohen_kappa(judge, tests)
    assert ours.kappa == pytest.approx(cohen_kappa_score(judge, tests), abs=1e-12)
    table = np.array(
        [[np.sum(judge & tests), np.sum(judge & ~tests)], [np.sum(~judge & tests), np.sum(~judge & ~tests)]]
    )
    assert ours.kappa == pytest.approx(cohens_kappa(table).kappa, abs=1e-12)
    assert ours.n == 200 and ours.dropped == 0


def test_cohen_kappa_drops_missing_and_rejects_degenerate() -> None:
    out = cohen_kappa(["pass", "fail", None, "pass"], ["pass", "fail", "pass", float("nan")])
    assert out.kappa == pytest.approx(1.0) and out.dropped == 2
    with pytest.raises(ValueError, match="single label"):
        cohen_kappa([1, 1], [1, 1])


def test_cost_per_solved_task_counts_failed_spend_and_drops_missing() -> None:
    out = cost_per_solved_task([1.0, 2.0, 3.0, np.nan], [1, 0, 1, 1])
    assert out.value == pytest.approx(3.0) and out.solved == 2 and out.dropped == 1
    assert math.isinf(cost_per_solved_task([1.0], [0]).value)
    with pytest.raises(ValueError):
        cost_per_solved_task([-1.0], [1])
