import itertools

import numpy as np
import pytest
from scipy import stats as sps

from orchestrator.stats import spread_against_noise, summarize_runs, wrong_order_probability


def test_summarize_runs() -> None:
    x = np.random.default_rng(0).normal(0.74, 0.01, size=52)
    out = summarize_runs(np.append(x, [np.nan, np.nan]), n_resamples=20_000, seed=0)
    assert out.n == 52 and out.dropped == 2
    assert out.mean == pytest.approx(x.mean()) and out.median == pytest.approx(np.median(x))
    assert out.sd == pytest.approx(x.std(ddof=1)) and out.best == x.max()
    ref = sps.bootstrap(
        (x,), np.mean, n_resamples=20_000, method="percentile", random_state=np.random.default_rng(0)
    ).confidence_interval
    assert out.low == pytest.approx(ref.low, abs=3e-4) and out.high == pytest.approx(ref.high, abs=3e-4)


def test_summarize_single_run_has_no_spread() -> None:
    out = summarize_runs([0.7], seed=0)
    assert out.n == 1 and np.isnan(out.sd) and np.isnan(out.low)
    with pytest.raises(ValueError, match="no scored run"):
        summarize_runs([np.nan], seed=0)


def test_spread_against_noise() -> None:
    out = spread_against_noise([[0.70, 0.72], [0.75, 0.75, 0.76], [0.80, 0.84]])
    assert out.pairings == 3
    assert out.range_of_means == pytest.approx(0.82 - 0.71)
    assert out.median_run_sd == pytest.approx(np.std([0.70, 0.72], ddof=1))
    assert out.ratio == pytest.approx(out.range_of_means / out.median_run_sd)
    with pytest.raises(ValueError, match="2 scored runs"):
        spread_against_noise([[0.7], [0.8, 0.9]])


def _brute_force(a: np.ndarray, b: np.ndarray, r: int) -> tuple[float, float]:
    wins = ties = 0
    total = 0
    for da in itertools.product(a, repeat=r):
        sa = round(sum(da), 12)
        for db in itertools.product(b, repeat=r):
            sb = round(sum(db), 12)
            wins += sa > sb
            ties += sa == sb
            total += 1
    return wins / total, ties / total


@pytest.mark.parametrize("r", [1, 2, 3])
def test_wrong_order_exact_matches_enumeration(r: int) -> None:
    a = np.array([0.70, 0.71, 0.73, 0.76, 0.71])
    b = np.array([0.72, 0.74, 0.75, 0.70])
    out = wrong_order_probability(a, b, r, seed=0)
    p_wrong, p_tie = _brute_force(a, b, r)
    assert out.exact
    assert out.p_wrong == pytest.approx(p_wrong, abs=1e-12) and out.p_tie == pytest.approx(p_tie, abs=1e-12)


def test_wrong_order_simulation_agrees_with_exact_and_shrinks_with_r() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(0.740, 0.0104, size=52)
    b = rng.normal(0.749, 0.0104, size=52)
    exact = wrong_order_probability(a, b, 3, seed=0)
    assert exact.exact
    import orchestrator.stats.continuous as cont

    limit = cont.EXACT_CELL_LIMIT
    try:
        cont.EXACT_CELL_LIMIT = 0
        sim = wrong_order_probability(a, b, 3, n_sims=400_000, seed=1)
    finally:
        cont.EXACT_CELL_LIMIT = limit
    assert not sim.exact and sim.p_wrong == pytest.approx(exact.p_wrong, abs=0.003)
    many = wrong_order_probability(a, b, 20, n_sims=100_000, seed=2)
    assert not many.exact and many.p_wrong < exact.p_wrong < wrong_order_probability(a, b, 1, seed=0).p_wrong


def test_wrong_order_rejects_bad_r() -> None:
    with pytest.raises(ValueError, match="r must"):
        wrong_order_probability([0.1], [0.2], 0, seed=0)


def test_run_gaps_by_hand() -> None:
    from itertools import combinations

    from orchestrator.stats import run_gaps

    rng = np.random.default_rng(4)
    groups = ["a"] * 7 + ["b"] * 5 + ["c"]
    values = rng.normal(0.74, 0.01, size=13)
    values[3] = np.nan
    by_hand = [abs(x - y) for g in "abc" for x, y in combinations(
        [v for gg, v in zip(groups, values, strict=True) if gg == g and not np.isnan(v)], 2)]
    out = run_gaps(groups, values)
    assert out.pairs == len(by_hand) == 15 + 10 and out.dropped == 1
    assert out.mean == pytest.approx(np.mean(by_hand)) and out.p90 == pytest.approx(np.quantile(by_hand, 0.9))
    with pytest.raises(ValueError, match="at least 2 scored runs"):
        run_gaps(["a"], [0.7])


@pytest.mark.parametrize("decimals", [None, 2, 3])
def test_run_gaps_past_the_dense_limit_gives_numpys_median_and_p90(
    decimals: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past `_DENSE_PAIRS` the gaps are never held (20,000 runs a pairing are 2e8 of them): the median and
    the 90th percentile are the dense path's to the last digit (order statistics found by counting, ties
    included: rounded scores tie often), the mean the same up to rounding."""
    from orchestrator.stats import continuous

    rng = np.random.default_rng(decimals or 0)
    sizes = (41, 17, 2, 30)
    values = rng.normal(0.74, 0.01, size=sum(sizes))
    if decimals is not None:
        values = np.round(values, decimals)
    groups = np.repeat(["a", "b", "c", "d"], sizes)
    dense = continuous.run_gaps(groups, values)
    monkeypatch.setattr(continuous, "_DENSE_PAIRS", 0)
    streamed = continuous.run_gaps(groups, values)
    assert (streamed.pairs, streamed.median, streamed.p90, streamed.dropped) == \
        (dense.pairs, dense.median, dense.p90, dense.dropped)
    assert streamed.pairs == sum(n * (n - 1) // 2 for n in sizes)
    assert streamed.mean == pytest.approx(dense.mean, rel=1e-13)
