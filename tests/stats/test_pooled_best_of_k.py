"""The pooled best-of-k policy against a brute-force simulation of the policy itself, and order-free."""

import dataclasses

import numpy as np
import pytest

from orchestrator.stats.pooled_keep_best import pooled_best_of_k


def _pairings(seed: int = 0, sizes: tuple[int, ...] = (30, 20, 25)) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    out = []
    for centre, n, bad in zip((0.74, 0.745, 0.735), sizes, (0.3, 0.05, 0.5), strict=True):
        h = rng.normal(centre, 0.01, size=n)
        e = np.round(h + rng.normal(0, 0.004, size=n), 3)  # rounded: ties on the rank score
        out.append((e, h, rng.random(n) >= bad))
    return out


def _simulate(groups, k: int, sims: int, seed: int):
    """Pick a pairing at random, draw k of its attempts, keep the compliant one with the best eval score
    (ties broken at random); None when no attempt is compliant."""
    rng = np.random.default_rng(seed)
    which = rng.integers(0, len(groups), size=sims)
    kept, none = [], 0
    for g, (e, h, c) in enumerate(groups):
        s = int((which == g).sum())
        idx = rng.integers(0, e.size, size=(s, k))
        key = np.where(c[idx], e[idx] + rng.random((s, k)) * 1e-9, -np.inf)
        ok = c[idx].any(axis=1)
        none += int((~ok).sum())
        kept.append(h[idx[np.arange(s), key.argmax(axis=1)]][ok])
    return none / sims, np.concatenate(kept)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_pooled_policy_matches_brute_force(k: int) -> None:
    groups = _pairings()
    row = pooled_best_of_k(groups, ks=(k,), n_resamples=200, seed=1)[0]
    p_none, kept = _simulate(groups, k, 600_000, seed=k)
    assert row.p_any == pytest.approx(1 - p_none, abs=0.003)
    assert row.mean_kept == pytest.approx(kept.mean(), abs=1e-4)
    for q, exact in ((0.5, row.median_kept), (0.05, row.p05_kept), (0.95, row.p95_kept)):
        lo, hi = np.quantile(kept, [q - 0.01, q + 0.01], method="inverted_cdf")
        assert lo <= exact <= hi


def test_one_attempt_weighs_every_compliant_run_alike() -> None:
    # at k = 1, with as many attempts in each pairing (the paper's 52), the kept artifact given one is kept
    # is a compliant run drawn uniformly from all of them
    groups = _pairings(sizes=(24, 24, 24))
    row = pooled_best_of_k(groups, ks=(1,), n_resamples=50, seed=0)[0]
    pooled = np.concatenate([h[c] for _, h, c in groups])
    assert row.median_kept == np.quantile(pooled, 0.5, method="inverted_cdf")
    assert row.mean_kept == pytest.approx(pooled.mean())
    assert row.gain_median == row.gain_mean == 0.0
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(pooled.size, sum(c.size for _, _, c in groups), method="wilson")
    assert (row.p_any_wilson_low, row.p_any_wilson_high) == pytest.approx((lo, hi))


def test_gain_is_in_the_median_with_the_mean_apart() -> None:
    groups = _pairings()
    one, three = pooled_best_of_k(groups, ks=(1, 3), n_resamples=300, seed=2)
    assert three.gain_median == pytest.approx(three.median_kept - one.median_kept)
    assert three.gain_mean == pytest.approx(three.mean_kept - one.mean_kept)
    assert three.gain_median_low <= three.gain_median <= three.gain_median_high
    assert three.p_any_low <= three.p_any


def test_row_order_does_not_move_any_figure() -> None:
    groups = _pairings()
    rng = np.random.default_rng(9)
    shuffled = []
    for e, h, c in groups:
        perm = rng.permutation(e.size)
        shuffled.append((e[perm], h[perm], c[perm]))
    a = pooled_best_of_k(groups, n_resamples=300, seed=4)
    b = pooled_best_of_k(shuffled, n_resamples=300, seed=4)
    np.testing.assert_equal([dataclasses.astuple(r) for r in a], [dataclasses.astuple(r) for r in b])  # NaN == NaN
