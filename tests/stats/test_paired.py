import numpy as np
import pytest
from scipy import stats as sps

from orchestrator.stats import compare_by_task, sign_flip_test, task_differences


def _two_versions(tasks: int, seed: int = 0, shift: float = 0.1) -> tuple:
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.2, 0.8, size=tasks)
    ids = np.repeat([f"t{i:03d}" for i in range(tasks)], 4)
    a = (rng.random(ids.size) < np.repeat(np.clip(p + shift, 0, 1), 4)).astype(float)
    b = (rng.random(ids.size) < np.repeat(p, 4)).astype(float)
    return ids, a, b


def test_task_differences_join_on_shared_tasks() -> None:
    shared, diffs, dropped = task_differences(["a", "a", "b", "c"], [1, 0, 1, 1], ["a", "b", "d"], [0, 1, 1])
    assert list(shared) == ["a", "b"] and diffs.tolist() == [0.5, 0.0] and dropped == 2


def test_compare_by_task_counts_and_range() -> None:
    ids, a, b = _two_versions(30)
    out = compare_by_task(ids, a, ids, b, n_resamples=4000, seed=0)
    assert out.tasks == 30 and out.better + out.worse + out.tied == 30
    assert out.has_range and out.low < out.mean_difference < out.high
    assert out.mean_difference == pytest.approx(a.mean() - b.mean())


def test_no_range_below_twelve_tasks() -> None:
    ids, a, b = _two_versions(11)
    out = compare_by_task(ids, a, ids, b, seed=0)
    assert not out.has_range and np.isnan(out.low) and out.tasks == 11


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_sign_flip_exact_matches_scipy(alternative: str) -> None:
    d = np.random.default_rng(3).normal(0.2, 1.0, size=12)
    ours = sign_flip_test(d, seed=0, alternative=alternative)
    ref = sps.permutation_test(
        (d,), np.mean, permutation_type="samples", alternative=alternative, n_resamples=np.inf
    )
    assert ours.exact and ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_sign_flip_monte_carlo_is_close_to_scipy() -> None:
    d = np.random.default_rng(4).normal(0.3, 1.0, size=40)
    ours = sign_flip_test(d, n_resamples=50_000, seed=0)
    ref = sps.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=50_000, random_state=np.random.default_rng(1)
    )
    assert not ours.exact and ours.p_value == pytest.approx(ref.pvalue, abs=0.01)


def test_sign_flip_drops_missing_and_handles_zero() -> None:
    out = sign_flip_test([0.0, 0.0, np.nan], seed=0)
    assert out.p_value == 1.0 and out.dropped == 1 and out.n == 2
