import numpy as np
import pytest

from orchestrator.stats import best_of_k, best_of_k_table


def _study(n: int = 52, seed: int = 0, noncompliant: float = 0.2) -> tuple:
    rng = np.random.default_rng(seed)
    holdout = rng.normal(0.74, 0.01, size=n)
    eval_score = holdout + rng.normal(0.0, 0.006, size=n)
    compliant = rng.random(n) >= noncompliant
    return eval_score, holdout, compliant


def _simulate(
    eval_score: np.ndarray, holdout: np.ndarray, compliant: np.ndarray, k: int, sims: int, seed: int
) -> tuple[float, float, np.ndarray]:
    """Brute force: draw k attempts, keep the compliant one with the best eval score."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, eval_score.size, size=(sims, k))
    key = np.where(compliant[idx], eval_score[idx], -np.inf)
    pick = idx[np.arange(sims), key.argmax(axis=1)]
    none = ~compliant[idx].any(axis=1)
    kept = holdout[pick][~none]
    return none.mean(), kept.mean(), kept


@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_exact_best_of_k_matches_brute_force_simulation(k: int) -> None:
    e, h, c = _study(noncompliant=0.4)
    exact = best_of_k(e, h, c, k)
    p_none, mean_kept, kept = _simulate(e, h, c, k, 400_000, seed=k)
    assert exact.p_none == pytest.approx(p_none, abs=0.003)
    assert exact.mean == pytest.approx(mean_kept, abs=1e-4)
    assert exact.probabilities.sum() == pytest.approx(1.0)
    for q in (0.05, 0.5, 0.95):  # sample quantiles fall between the exact ones just around q
        assert (
            exact.quantile(q - 0.01)
            <= np.quantile(kept, q, method="inverted_cdf")
            <= exact.quantile(q + 0.01)
        )


def test_formula_by_hand() -> None:
    # n = 4 attempts, m = 1 noncompliant; compliant ranked by eval: r = 1 (0.1), 2 (0.2), 3 (0.3)
    out = best_of_k([0.3, 0.1, 0.2, 0.9], [3.0, 1.0, 2.0, 9.0], [True, True, True, False], 2)
    assert out.p_none == pytest.approx(1 / 16)
    p = np.array([(2 / 4) ** 2 - (1 / 4) ** 2, (3 / 4) ** 2 - (2 / 4) ** 2, 1 - (3 / 4) ** 2]) / (1 - 1 / 16)
    assert out.values.tolist() == [1.0, 2.0, 3.0]
    assert out.probabilities == pytest.approx(p)


def test_ties_on_eval_share_probability() -> None:
    e = np.array([0.5, 0.5, 0.1])
    h = np.array([1.0, 3.0, 0.0])
    out = best_of_k(e, h, [True, True, True], 2)
    _p_none, mean_kept, _ = _simulate_with_random_ties(e, h, 2)
    assert out.mean == pytest.approx(mean_kept, abs=0.01)
    assert out.probabilities[1] == pytest.approx(out.probabilities[2])


def _simulate_with_random_ties(e: np.ndarray, h: np.ndarray, k: int) -> tuple:
    rng = np.random.default_rng(0)
    sims = 200_000
    idx = rng.integers(0, e.size, size=(sims, k))
    jitter = rng.random((sims, k)) * 1e-9
    pick = idx[np.arange(sims), (e[idx] + jitter).argmax(axis=1)]
    return 0.0, h[pick].mean(), None


def test_table_gain_and_oracle() -> None:
    e, h, c = _study(seed=2)
    rows = best_of_k_table(e, h, c, n_resamples=2000, seed=0)
    assert [r.k for r in rows] == [1, 3, 5, 10]
    one = rows[0]
    assert one.gain == pytest.approx(0.0, abs=1e-12) and one.mean_kept == pytest.approx(h[c].mean())
    for r in rows[1:]:
        assert r.gain == pytest.approx(r.mean_kept - one.mean_kept, abs=1e-12)
        assert r.gain_low <= r.gain <= r.gain_high
        assert r.oracle_gain >= r.gain  # choosing on the holdout is an upper bound
        assert r.p05_kept <= r.median_kept <= r.p95_kept
        assert r.p_any == pytest.approx(1 - (np.sum(~c) / c.size) ** r.k)
    assert rows[-1].p_any > rows[1].p_any


def test_table_outer_bootstrap_matches_slow_loop() -> None:
    e, h, c = _study(n=20, seed=3)
    rows = best_of_k_table(e, h, c, ks=(3,), n_resamples=300, seed=7)
    rng = np.random.default_rng(7)
    from orchestrator.stats import resample_counts

    counts = resample_counts(e.size, 300, rng)
    gains = []
    for row in counts:
        idx = np.repeat(np.arange(e.size), row)
        if not c[idx].any():
            continue
        gains.append(best_of_k(e[idx], h[idx], c[idx], 3).mean - h[idx][c[idx]].mean())
    lo, hi = np.quantile(gains, [0.025, 0.975])
    assert rows[0].gain_low == pytest.approx(lo, abs=1e-10) and rows[0].gain_high == pytest.approx(
        hi, abs=1e-10
    )


def test_no_compliant_attempt_keeps_nothing() -> None:
    out = best_of_k([0.1, 0.2], [0.1, 0.2], [False, False], 3)
    assert out.p_none == 1.0 and np.isnan(out.mean)
    rows = best_of_k_table([0.1, 0.2], [0.1, 0.2], [False, False], ks=(1, 3), n_resamples=10, seed=0)
    assert np.isnan(rows[1].gain) and rows[1].dropped_resamples == 10


def test_compliant_attempt_needs_scores() -> None:
    with pytest.raises(ValueError, match="compliant attempt"):
        best_of_k([np.nan, 0.2], [0.1, 0.2], [True, True], 2)
    out = best_of_k([np.nan, 0.2], [np.nan, 0.2], [False, True], 2)
    assert out.p_none == pytest.approx(0.25)
