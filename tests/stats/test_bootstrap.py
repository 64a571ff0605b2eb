import numpy as np
import pytest
from scipy import stats as sps

from orchestrator.stats import (
    bootstrap_mean,
    resample_counts,
    task_bootstrap,
    task_bootstrap_draws,
    totals_by_task,
)


def _runs(seed: int = 0, tasks: int = 30, repeats: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, size=tasks)
    task_ids = np.repeat([f"t{i}" for i in range(tasks)], repeats)
    outcome = (rng.random(tasks * repeats) < np.repeat(p, repeats)).astype(float)
    return task_ids, outcome


def test_totals_drop_missing_and_count() -> None:
    totals = totals_by_task(["a", "a", "b", "c"], [1.0, np.nan, 0.0, 1.0])
    assert list(totals.tasks) == ["a", "b", "c"]
    assert totals.counts.tolist() == [1, 1, 1] and totals.dropped == 1


def test_task_bootstrap_is_seeded_and_reproducible() -> None:
    tasks, y = _runs()
    a = task_bootstrap(tasks, y, n_resamples=2000, seed=3)
    b = task_bootstrap(tasks, y, n_resamples=2000, seed=3)
    c = task_bootstrap(tasks, y, n_resamples=2000, seed=4)
    assert a == b and a != c
    assert a.low < a.estimate < a.high and a.units == 30


def test_task_bootstrap_matches_scipy_on_task_means() -> None:
    # resampling tasks with all their runs = bootstrapping the task means (equal runs per task)
    tasks, y = _runs(seed=1)
    ours = task_bootstrap(tasks, y, n_resamples=20_000, seed=0)
    means = totals_by_task(tasks, y).means
    ref = sps.bootstrap(
        (means,), np.mean, n_resamples=20_000, method="percentile", random_state=np.random.default_rng(0)
    )
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.01)
    assert ours.se == pytest.approx(ref.standard_error, rel=0.05)


def test_task_bootstrap_is_wider_than_a_run_bootstrap_when_tasks_differ() -> None:
    tasks, y = _runs(seed=2, tasks=20, repeats=10)
    by_task = task_bootstrap(tasks, y, n_resamples=5000, seed=0)
    by_run = bootstrap_mean(y, n_resamples=5000, seed=0)
    assert by_task.se > by_run.se


def test_run_weighting_pools_runs() -> None:
    draws = task_bootstrap_draws([3.0, 0.0], [3, 1], n_resamples=4000, seed=0, weighting="run")
    # possible pooled means: 3/3=1, 0/1=0, 3/4=.75 (mixed draw)
    assert set(np.round(np.unique(draws), 6)) <= {0.0, 0.75, 1.0}
    assert task_bootstrap(
        ["a", "a", "a", "b"], [1, 1, 1, 0], n_resamples=10, seed=0, weighting="run"
    ).estimate == pytest.approx(0.75)


def test_bootstrap_mean_matches_scipy() -> None:
    x = np.random.default_rng(5).normal(0.7, 0.01, size=52)
    ours = bootstrap_mean(np.append(x, np.nan), n_resamples=20_000, seed=1)
    ref = sps.bootstrap(
        (x,), np.mean, n_resamples=20_000, method="percentile", random_state=np.random.default_rng(2)
    ).confidence_interval
    assert ours.dropped == 1 and ours.units == 52
    assert ours.low == pytest.approx(ref.low, abs=2e-4) and ours.high == pytest.approx(ref.high, abs=2e-4)


def test_resample_counts_rows_sum_to_n() -> None:
    counts = resample_counts(7, 100, np.random.default_rng(0))
    assert counts.shape == (100, 7) and (counts.sum(axis=1) == 7).all()


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 10, "confidence": 0}, "confidence"),
        ({"n_resamples": 10, "weighting": "x"}, "weighting"),
    ],
)
def test_bootstrap_rejects_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        task_bootstrap(["a", "b"], [1, 0], seed=0, **kwargs)


def test_seed_is_required_and_checked() -> None:
    with pytest.raises(TypeError):
        task_bootstrap(["a"], [1.0])  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="seed"):
        bootstrap_mean([1.0, 2.0], seed="x")  # type: ignore[arg-type]
