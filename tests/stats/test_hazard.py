import numpy as np
import pytest
from statsmodels.duration.survfunc import SurvfuncRight
from statsmodels.stats.proportion import proportion_confint

from orchestrator.stats import divergence_hazard


def _pairs(seed: int = 0, n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Pairs with 3-30 compared calls; about half diverge, at a hazard that grows with the index."""
    rng = np.random.default_rng(seed)
    calls = rng.integers(3, 31, size=n).astype(float)
    first = np.full(n, np.nan)
    for i in range(n):
        for k in range(int(calls[i])):
            if rng.random() < 0.02 + 0.01 * k:
                first[i] = k
                break
    return first, calls


def _brute_force(first: np.ndarray, calls: np.ndarray, k: int) -> tuple[int, int]:
    """Pairs identical at every call before k and compared at k; how many of them differ at k."""
    at_risk = diverged = 0
    for fd, n in zip(first, calls, strict=True):
        identical_before = np.isnan(fd) or fd >= k
        compared_at_k = k < n
        if identical_before and compared_at_k:
            at_risk += 1
            diverged += fd == k
    return at_risk, diverged


def test_hazard_matches_brute_force_and_kaplan_meier_risk_sets() -> None:
    first, calls = _pairs()
    out = divergence_hazard(first, calls, min_at_risk=10)
    assert out.pairs == 200 and out.diverged + out.never_diverged == 200
    assert out.rows and out.rows[0].index == 0
    for row in out.rows:
        assert (row.at_risk, row.diverged) == _brute_force(first, calls, row.index)
        assert row.hazard == pytest.approx(row.diverged / row.at_risk)
        low, high = proportion_confint(row.diverged, row.at_risk, alpha=0.05, method="beta")
        assert (row.low, row.high) == (pytest.approx(low, abs=1e-9), pytest.approx(high, abs=1e-9))
    # Kaplan-Meier with event time = first divergence, censoring time = last compared call
    event = ~np.isnan(first)
    km = SurvfuncRight(np.where(event, first, calls - 1), event.astype(int))
    rows = {r.index: r for r in out.rows}
    checked = 0
    for t, n_risk, n_events in zip(km.surv_times, km.n_risk, km.n_events, strict=True):
        if int(t) in rows:
            assert (rows[int(t)].at_risk, rows[int(t)].diverged) == (n_risk, n_events)
            checked += 1
    assert checked >= 5


def test_hazard_stops_where_the_risk_set_falls_under_the_minimum() -> None:
    first, calls = _pairs(seed=1)
    out = divergence_hazard(first, calls, min_at_risk=40)
    assert all(r.at_risk >= 40 for r in out.rows)
    assert out.stopped_at == out.rows[-1].index + 1
    assert out.at_risk_there == _brute_force(first, calls, out.stopped_at)[0] < 40
    shorter = divergence_hazard(first, calls, min_at_risk=150)
    assert len(shorter.rows) < len(out.rows)


def test_hazard_on_a_hand_example() -> None:
    # five pairs: diverge at 0, at 2, at 2; identical through 4 calls; identical through 1 call
    out = divergence_hazard([0, 2, 2, None, np.nan], [5, 3, 4, 4, 1], min_at_risk=1)
    table = [(r.index, r.at_risk, r.diverged) for r in out.rows]
    assert table == [(0, 5, 1), (1, 3, 0), (2, 3, 2), (3, 1, 0)]
    assert out.stopped_at == 4 and out.at_risk_there == 0
    assert out.diverged == 3 and out.never_diverged == 2


def test_hazard_checks_its_input() -> None:
    with pytest.raises(ValueError, match="before its number of compared calls"):
        divergence_hazard([3], [3], min_at_risk=1)
    with pytest.raises(ValueError, match="min_at_risk"):
        divergence_hazard([0], [1], min_at_risk=0)
    out = divergence_hazard([0, 1], [1, np.nan], min_at_risk=1)
    assert out.dropped == 1 and out.pairs == 1
