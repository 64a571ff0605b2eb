"""Two versions on the same tasks: paired comparison by task and the sign-flip permutation test."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import (
    Seed,
    check_confidence,
    check_resamples,
    float_array,
    percentile_interval,
    rng_from,
)
from orchestrator.stats.bootstrap import task_bootstrap_draws, totals_by_task

#: below this many shared tasks a resampled range is not given, only the counts (DESIGN.md, Statistics)
MIN_TASKS_FOR_RANGE = 12
#: up to this many nonzero differences the sign-flip test enumerates all 2^n sign patterns
EXACT_SIGN_FLIP_MAX = 16


@dataclass(frozen=True)
class PairedComparison:
    """Version A against version B, task by task (difference = A - B)."""

    tasks: int
    better: int
    worse: int
    tied: int
    mean_difference: float
    low: float
    high: float
    dropped_tasks: int
    differences: NDArray[np.float64]

    @property
    def has_range(self) -> bool:
        return not math.isnan(self.low)


def task_differences(
    tasks_a: ArrayLike, values_a: ArrayLike, tasks_b: ArrayLike, values_b: ArrayLike
) -> tuple[NDArray[np.object_], NDArray[np.float64], int]:
    """On the tasks both versions were scored on, by how much does A's task mean beat B's?

    Returns (shared tasks, mean_A - mean_B per task, number of tasks only one version has).
    Missing run values are dropped before averaging.
    """
    ta = totals_by_task(tasks_a, values_a)
    tb = totals_by_task(tasks_b, values_b)
    shared, ia, ib = np.intersect1d(ta.tasks.astype(str), tb.tasks.astype(str), return_indices=True)
    dropped = int(ta.tasks.size + tb.tasks.size - 2 * shared.size)
    return shared.astype(object), ta.means[ia] - tb.means[ib], dropped


def compare_by_task(
    tasks_a: ArrayLike,
    values_a: ArrayLike,
    tasks_b: ArrayLike,
    values_b: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    confidence: float = 0.95,
    min_tasks: int = MIN_TASKS_FOR_RANGE,
    higher_is_better: bool = True,
) -> PairedComparison:
    """Is version A better than version B on the same tasks, and by how much?

    Per task, compares the mean over that task's runs. Gives the counts of tasks where A is better,
    worse or tied, the mean difference, and a percentile range from resampling tasks. With fewer than
    `min_tasks` shared tasks the range is NaN: the counts are all that a few tasks support. "Better"
    follows `higher_is_better` (a lower RMSE is better); the differences stay A - B in the metric's units.
    """
    check_confidence(confidence)
    _, diffs, dropped = task_differences(tasks_a, values_a, tasks_b, values_b)
    if diffs.size == 0:
        raise ValueError("the two versions share no scored task")
    low = high = float("nan")
    if diffs.size >= min_tasks:
        draws = task_bootstrap_draws(diffs, np.ones(diffs.size), n_resamples=n_resamples, seed=seed)
        low, high = percentile_interval(draws, confidence)
    scale = np.maximum(1.0, np.abs(diffs))
    tied = np.abs(diffs) <= 1e-12 * scale
    return PairedComparison(
        tasks=int(diffs.size),
        better=int(((diffs > 0 if higher_is_better else diffs < 0) & ~tied).sum()),
        worse=int(((diffs < 0 if higher_is_better else diffs > 0) & ~tied).sum()),
        tied=int(tied.sum()),
        mean_difference=float(diffs.mean()),
        low=low,
        high=high,
        dropped_tasks=dropped,
        differences=diffs,
    )


@dataclass(frozen=True)
class PermutationResult:
    statistic: float
    p_value: float
    exact: bool
    n: int
    dropped: int


def sign_flip_test(
    differences: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    alternative: str = "two-sided",
) -> PermutationResult:
    """Could a mean paired difference this large arise if the two versions were interchangeable?

    Sign-flip permutation test of the mean difference (Fisher, 1935): under the null each task's
    difference is as likely to have either sign. Exact over all 2^n sign patterns up to n = 16,
    otherwise `n_resamples` random patterns with p = (1 + hits) / (1 + n_resamples). Missing
    differences are dropped and counted. Agrees with scipy.stats.permutation_test(permutation_type="samples").
    """
    d = float_array(differences, "differences")
    keep = ~np.isnan(d)
    d = d[keep]
    if d.size == 0:
        raise ValueError("no difference to test")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}")
    observed = float(d.mean())
    n = d.size
    exact = n <= EXACT_SIGN_FLIP_MAX
    if exact:
        patterns = np.arange(2**n)[:, None] >> np.arange(n)[None, :] & 1
        null = ((patterns * 2 - 1) @ d) / n
    else:
        n_resamples = check_resamples(n_resamples)
        rng = rng_from(seed)
        null = np.empty(n_resamples)
        block = max(1, 2_000_000 // n)
        for start in range(0, n_resamples, block):
            stop = min(n_resamples, start + block)
            signs = rng.integers(0, 2, size=(stop - start, n)) * 2 - 1
            null[start:stop] = (signs @ d) / n
    tol = 1e-12 * max(1.0, abs(observed))
    greater = np.count_nonzero(null >= observed - tol)
    less = np.count_nonzero(null <= observed + tol)
    if exact:
        p_greater, p_less = greater / null.size, less / null.size
    else:
        p_greater, p_less = (greater + 1) / (null.size + 1), (less + 1) / (null.size + 1)
    p: float
    if alternative == "greater":
        p = p_greater
    elif alternative == "less":
        p = p_less
    else:
        p = min(1.0, 2.0 * min(p_greater, p_less))
    return PermutationResult(
        statistic=observed, p_value=float(p), exact=exact, n=int(n), dropped=int((~keep).sum())
    )
