import numpy as np
import pytest
from scipy import stats as sps

from orchestrator.stats import rank_correlation


def test_rank_correlation_matches_scipy() -> None:
    rng = np.random.default_rng(0)
    usage = rng.uniform(1000, 18000, size=52)
    score = 0.74 + 1e-6 * usage + rng.normal(0, 0.01, size=52)
    usage[3] = usage[4]  # a tie
    out = rank_correlation(np.append(usage, np.nan), np.append(score, 0.7), n_resamples=20_000, seed=1)
    assert out.n == 52 and out.dropped == 1
    assert out.rho == pytest.approx(sps.spearmanr(usage, score).statistic, abs=1e-12)

    ru = sps.rankdata(usage)

    def rho(y: np.ndarray, axis: int = -1) -> np.ndarray:  # spearmanr, vectorised over resamples
        ry = sps.rankdata(y, axis=axis)
        return np.array([np.corrcoef(ru, row)[0, 1] for row in np.atleast_2d(ry)])

    assert rho(score)[0] == pytest.approx(out.rho)
    ref = sps.permutation_test(
        (score,),
        rho,
        permutation_type="pairings",
        n_resamples=20_000,
        vectorized=True,
        random_state=np.random.default_rng(2),
    )
    assert out.p_value == pytest.approx(ref.pvalue, abs=0.01)


def test_rank_correlation_under_null_is_not_significant() -> None:
    rng = np.random.default_rng(3)
    out = rank_correlation(rng.random(40), rng.random(40), n_resamples=5000, seed=0)
    assert out.p_value > 0.05


def test_rank_correlation_rejects_constant_input() -> None:
    with pytest.raises(ValueError, match="constant"):
        rank_correlation([1, 1, 1], [1, 2, 3], seed=0)


def test_pooled_rank_correlation_by_hand_and_against_scipy() -> None:
    from scipy import stats as sps

    from orchestrator.stats import pooled_rank_correlation

    rng = np.random.default_rng(5)
    groups = np.repeat(["p1", "p2", "p3"], 20)
    x = rng.normal(size=60) + np.repeat([0.0, 5.0, -3.0], 20)  # group offsets must not enter
    y = x + rng.normal(size=60) * 2
    out = pooled_rank_correlation(groups, x, y, n_resamples=2_000, seed=1)
    rx = np.concatenate([sps.rankdata(x[groups == g]) for g in ("p1", "p2", "p3")])
    ry = np.concatenate([sps.rankdata(y[groups == g]) for g in ("p1", "p2", "p3")])
    assert out.rho == pytest.approx(np.corrcoef(rx, ry)[0, 1]) and out.n == 60 and out.groups == 3
    assert out.low < out.rho < out.high and out.p_value < 0.01
    # one group: Spearman's rho, and the permutation p of scipy's test
    one = pooled_rank_correlation(np.zeros(20), x[:20], y[:20], n_resamples=5_000, seed=2)
    assert one.rho == pytest.approx(sps.spearmanr(x[:20], y[:20])[0])
    ref = sps.permutation_test((x[:20], y[:20]), lambda a, b: sps.spearmanr(a, b)[0], permutation_type="pairings",
                               n_resamples=5_000, random_state=0)
    assert one.p_value == pytest.approx(ref.pvalue, abs=0.02)
    perm = rng.permutation(60)
    assert pooled_rank_correlation(groups[perm], x[perm], y[perm], n_resamples=300, seed=4) == \
        pooled_rank_correlation(groups, x, y, n_resamples=300, seed=4)


def test_pooled_rank_correlation_refuses_a_value_tied_within_every_group() -> None:
    """Each pairing's runs all scored the same (a noop agent, say): no within-pairing ranking of the score,
    so no correlation: a ValueError naming why (the report's note), not a NaN behind numpy's 0/0 warnings."""
    import warnings

    from orchestrator.stats import pooled_rank_correlation

    groups = ["a"] * 4 + ["b"] * 3
    usage = [1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 6.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="y is constant within every group"):
            pooled_rank_correlation(groups, usage, [0.7] * 4 + [0.8] * 3, n_resamples=50, seed=0)
        with pytest.raises(ValueError, match="x is constant within every group"):
            pooled_rank_correlation(groups, [3.0] * 7, usage, n_resamples=50, seed=0)
        # tied within one group only: still defined
        out = pooled_rank_correlation(groups, usage, [0.7] * 4 + [0.1, 0.3, 0.2], n_resamples=50, seed=0)
    # mid-rank percentiles (r - 1/2) / n: a's usage 1/8..7/8 against its tied 1/2; b's two orders agree
    rx, ry = [1 / 8, 3 / 8, 5 / 8, 7 / 8, 1 / 6, 5 / 6, 1 / 2], [1 / 2] * 4 + [1 / 6, 5 / 6, 1 / 2]
    assert out.rho == pytest.approx(np.corrcoef(rx, ry)[0, 1])


def test_pooled_rank_correlation_does_not_depend_on_the_block_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bootstrap and the permutations run a block of rows at a time; every figure is the same to the last
    digit whatever the block (one block is the whole n_resamples x runs matrix the statistic once held)."""
    from orchestrator.stats import bootstrap, pooled_rank_correlation

    rng = np.random.default_rng(1)
    groups = np.repeat(["a", "b", "c"], [40, 25, 9])
    x = rng.normal(size=74)
    y = x + rng.normal(size=74)
    y[:5] = y[0]  # ties
    out = []
    for cells in (1 << 62, 400, 1_000, 3_000):
        monkeypatch.setattr(bootstrap, "_BLOCK_CELLS", cells)
        out.append(pooled_rank_correlation(groups, x, y, n_resamples=203, seed=3))
    assert all(o == out[0] for o in out[1:])
    assert (out[0].n, out[0].groups, out[0].p_value) == (74, 3, 1 / 204)
