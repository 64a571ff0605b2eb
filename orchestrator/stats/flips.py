"""Paired runs of one configuration: the outcome table, the net swing and how often outcomes flip.

A pair is two runs of the same task (and repeat) under the same configuration, or under a control
that differs in one declared way (for example the seed). Intervals resample tasks with all their
pairs, because the pairs of one task are not independent draws of the benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import (
    Seed,
    bool_array,
    check_confidence,
    check_resamples,
    float_array,
    percentile_interval,
    rng_from,
    same_length,
)
from orchestrator.stats.binary import mcnemar_exact
from orchestrator.stats.bootstrap import task_bootstrap_draws

#: resampled task rows per block, so the index matrix never holds more than this many cells
_BLOCK_CELLS = 2_000_000


@dataclass(frozen=True)
class OutcomeTable:
    """The four numbers of paired pass/fail outcomes (first run, second run)."""

    both: int
    first_only: int
    second_only: int
    neither: int
    dropped: int = 0

    @property
    def pairs(self) -> int:
        return self.both + self.first_only + self.second_only + self.neither

    @property
    def discordant(self) -> int:
        return self.first_only + self.second_only

    @property
    def first_rate(self) -> float:
        return (self.both + self.first_only) / self.pairs

    @property
    def second_rate(self) -> float:
        return (self.both + self.second_only) / self.pairs

    @property
    def net_swing(self) -> float:
        """First pass rate minus second pass rate, as a fraction (x 100 for points)."""
        return (self.first_only - self.second_only) / self.pairs

    @property
    def disagreement(self) -> float:
        return self.discordant / self.pairs

    @property
    def mcnemar_p(self) -> float:
        """Exact two-sided McNemar p-value of the discordant pairs (`binary.mcnemar_exact`)."""
        return mcnemar_exact(self.first_only, self.second_only)


def _paired_outcomes(first: ArrayLike, second: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
    a = float_array(first, "first")
    b = float_array(second, "second")
    same_length(first=a, second=b)
    keep = ~(np.isnan(a) | np.isnan(b))
    if not np.isin(a[keep], (0.0, 1.0)).all() or not np.isin(b[keep], (0.0, 1.0)).all():
        raise ValueError("outcomes must hold 0/1 or booleans (NaN or None for missing)")
    return a == 1.0, b == 1.0, keep


def outcome_table(first: ArrayLike, second: ArrayLike) -> OutcomeTable:
    """Over pairs of runs, how often did both pass, only the first, only the second, or neither?

    Pairs missing either outcome (NaN/None) are dropped and counted.
    """
    a, b, keep = _paired_outcomes(first, second)
    a, b = a[keep], b[keep]
    return OutcomeTable(
        both=int((a & b).sum()),
        first_only=int((a & ~b).sum()),
        second_only=int((~a & b).sum()),
        neither=int((~a & ~b).sum()),
        dropped=int((~keep).sum()),
    )


@dataclass(frozen=True)
class ClusteredEstimate:
    """A rate or difference over pairs with a percentile interval from resampling tasks."""

    estimate: float
    low: float
    high: float
    confidence: float
    tasks: int
    pairs: int
    n_resamples: int
    dropped: int


def _by_task(tasks: ArrayLike, values: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
    task_arr = np.asarray(tasks, dtype=object)
    if task_arr.ndim != 1:
        raise ValueError("tasks must be one-dimensional")
    same_length(tasks=task_arr, values=values)
    labels, inverse = np.unique(task_arr.astype(str), return_inverse=True)
    return labels, inverse, np.bincount(inverse, minlength=labels.size)


def clustered_mean(
    tasks: ArrayLike,
    values: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    confidence: float = 0.95,
) -> ClusteredEstimate:
    """What is the mean of a per-pair value, and how far could it move on other tasks?

    Estimate: the mean over pairs. Interval: percentile bootstrap resampling tasks with all their pairs
    (a resample's statistic is its pooled mean over its pairs). Missing values (NaN) are dropped and
    counted. `net_swing` and `disagreement_rate` are this over (first - second) and (first != second).
    """
    check_confidence(confidence)
    vals = float_array(values, "values")
    task_arr = np.asarray(tasks, dtype=object)
    same_length(tasks=task_arr, values=vals)
    keep = ~np.isnan(vals)
    labels, inverse, counts = _by_task(task_arr[keep], vals[keep])
    if labels.size == 0:
        raise ValueError("no pair has a value")
    sums = np.bincount(inverse, weights=vals[keep], minlength=labels.size)
    draws = task_bootstrap_draws(sums, counts, n_resamples=n_resamples, seed=seed, weighting="run")
    low, high = percentile_interval(draws, confidence)
    return ClusteredEstimate(
        estimate=float(sums.sum() / counts.sum()),
        low=low,
        high=high,
        confidence=confidence,
        tasks=int(labels.size),
        pairs=int(counts.sum()),
        n_resamples=int(draws.size),
        dropped=int((~keep).sum()),
    )


def _with_missing(values: NDArray[np.float64], keep: NDArray[np.bool_]) -> NDArray[np.float64]:
    return np.where(keep, values, np.nan)


def net_swing(
    tasks: ArrayLike,
    first: ArrayLike,
    second: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    confidence: float = 0.95,
) -> ClusteredEstimate:
    """By how much did the first runs' pass rate beat the second's, and how far could that move on other tasks?

    Estimate: (first-only - second-only) / pairs. Interval: percentile bootstrap resampling tasks with
    all their pairs (the statistic of a resample is its pooled difference over its pairs). Pairs
    missing an outcome are dropped and counted.
    """
    a, b, keep = _paired_outcomes(first, second)
    swing = _with_missing(a.astype(float) - b.astype(float), keep)
    return clustered_mean(tasks, swing, n_resamples=n_resamples, seed=seed, confidence=confidence)


def disagreement_rate(
    tasks: ArrayLike,
    first: ArrayLike,
    second: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    confidence: float = 0.95,
) -> ClusteredEstimate:
    """What share of paired runs disagree on the outcome, and how far could that move on other tasks?

    Estimate: discordant pairs / pairs. Interval: percentile bootstrap resampling tasks with all their
    pairs. Pairs missing an outcome are dropped and counted.
    """
    a, b, keep = _paired_outcomes(first, second)
    flips = _with_missing((a != b).astype(float), keep)
    return clustered_mean(tasks, flips, n_resamples=n_resamples, seed=seed, confidence=confidence)


@dataclass(frozen=True)
class SeedControl:
    """Disagreement of same-seed pairs against different-seed pairs of the same tasks."""

    same_rate: float
    same_pairs: int
    different_rate: float
    different_pairs: int
    difference: float
    low: float
    high: float
    p_value: float
    tasks: int
    n_resamples: int
    dropped: int


def seed_control(
    tasks: ArrayLike,
    disagree: ArrayLike,
    different_seed: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    confidence: float = 0.95,
) -> SeedControl:
    """Do pairs run with different seeds disagree more often than pairs run with the same seed?

    difference = rate(different seed) - rate(same seed), over pairs. Interval: percentile bootstrap
    resampling tasks with all their pairs of both kinds (resamples lacking one kind are discarded).
    p-value: two-sided permutation test that shuffles the same/different labels within each task
    (so task difficulty cannot masquerade as a seed effect), p = (1 + hits) / (1 + n_resamples).
    Pairs with a missing disagreement (NaN) are dropped and counted.
    """
    check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    d = float_array(disagree, "disagree")
    diff = bool_array(different_seed, "different_seed")
    task_arr = np.asarray(tasks, dtype=object)
    same_length(tasks=task_arr, disagree=d, different_seed=diff)
    keep = ~np.isnan(d)
    if not np.isin(d[keep], (0.0, 1.0)).all():
        raise ValueError("disagree must hold 0/1 or booleans (NaN for missing)")
    d, diff, task_arr = d[keep], diff[keep], task_arr[keep]
    if not diff.any() or diff.all():
        raise ValueError("need both same-seed and different-seed pairs")
    labels, inverse, _ = _by_task(task_arr, d)
    k = labels.size

    def difference(dis: NDArray[np.float64], lab: NDArray[np.bool_]) -> float:
        return float(dis[lab].mean() - dis[~lab].mean())

    observed = difference(d, diff)
    rng = rng_from(seed)
    # bootstrap over tasks: per-task totals of each kind, then pooled rates per resample
    n_diff = np.bincount(inverse, weights=diff, minlength=k)
    n_same = np.bincount(inverse, weights=~diff, minlength=k)
    s_diff = np.bincount(inverse, weights=d * diff, minlength=k)
    s_same = np.bincount(inverse, weights=d * ~diff, minlength=k)
    draws = np.empty(n_resamples)
    block = max(1, _BLOCK_CELLS // k)
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        idx = rng.integers(0, k, size=(stop - start, k))
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[start:stop] = s_diff[idx].sum(1) / n_diff[idx].sum(1) - s_same[idx].sum(1) / n_same[
                idx
            ].sum(1)
    finite = draws[np.isfinite(draws)]
    low, high = percentile_interval(finite, confidence)
    # within-task label permutation: sort pairs by task, shuffle labels inside each task's block
    order = np.argsort(inverse, kind="stable")
    d_sorted, lab_sorted, inv_sorted = d[order], diff[order], inverse[order]
    keys = 2.0 * inv_sorted.astype(np.float64)  # + noise in [0, 1): sorts by task, then at random
    hits = 0
    block = max(1, _BLOCK_CELLS // d.size)
    for start in range(0, n_resamples, block):
        size = min(n_resamples, start + block) - start
        perm = np.argsort(keys + rng.random((size, d.size)), axis=1)
        labs = lab_sorted[perm]
        n1 = labs.sum(1)
        null = (labs * d_sorted).sum(1) / n1 - (~labs * d_sorted).sum(1) / (d.size - n1)
        hits += int(np.count_nonzero(np.abs(null) >= abs(observed) - 1e-12))
    return SeedControl(
        same_rate=float(d[~diff].mean()),
        same_pairs=int((~diff).sum()),
        different_rate=float(d[diff].mean()),
        different_pairs=int(diff.sum()),
        difference=observed,
        low=low,
        high=high,
        p_value=(hits + 1) / (n_resamples + 1),
        tasks=int(k),
        n_resamples=int(finite.size),
        dropped=int((~keep).sum()),
    )
