"""How much one run moves: score per repeat, and the variance split into between- and within-task parts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import float_array, same_length


@dataclass(frozen=True)
class RepeatScores:
    """The benchmark score of each repeat (one pass over the tasks) and how much it moves."""

    repeats: NDArray[np.object_]
    scores: NDArray[np.float64]
    mean: float
    sd: float
    low: float
    high: float
    dropped: int


def score_per_repeat(repeats: ArrayLike, values: ArrayLike) -> RepeatScores:
    """If we had run the benchmark only once, which score could we have reported, and how far apart are they?

    Groups runs by repeat number, averages each repeat over its tasks, and gives the mean, SD (ddof=1),
    minimum and maximum of those repeat scores. Missing values are dropped and counted.
    """
    rep = np.asarray(repeats, dtype=object)
    vals = float_array(values, "values")
    same_length(repeats=rep, values=vals)
    keep = ~np.isnan(vals)
    labels, inverse = np.unique(rep[keep].astype(str), return_inverse=True)
    if labels.size == 0:
        raise ValueError("no scored run")
    sums = np.bincount(inverse, weights=vals[keep], minlength=labels.size)
    counts = np.bincount(inverse, minlength=labels.size)
    scores = sums / counts
    # keep numeric repeat labels in numeric order
    try:
        order = np.argsort(labels.astype(float), kind="stable")
    except ValueError:
        order = np.arange(labels.size)
    scores = scores[order]
    return RepeatScores(
        repeats=labels[order].astype(object),
        scores=scores,
        mean=float(scores.mean()),
        sd=float(scores.std(ddof=1)) if scores.size > 1 else float("nan"),
        low=float(scores.min()),
        high=float(scores.max()),
        dropped=int((~keep).sum()),
    )


@dataclass(frozen=True)
class VarianceSplit:
    """Variance of single runs split into a between-task and a within-task part (method of moments)."""

    between: float
    within: float
    tasks: int
    runs_per_task: float
    dropped: int

    @property
    def total(self) -> float:
        return self.between + self.within

    @property
    def between_share(self) -> float:
        return self.between / self.total if self.total > 0 else float("nan")


def variance_components(tasks: ArrayLike, values: ArrayLike) -> VarianceSplit:
    """How much of the spread is which task it is, and how much is the luck of the run?

    within = mean over tasks of the sample variance of runs of that task (tasks with >= 2 runs);
    between = variance of task means (ddof=1) minus the part of it that run noise explains,
    mean(within_t / n_t), floored at 0. For balanced data these are the one-way ANOVA estimators
    (MSW and (MSB - MSW) / n); they are the w^2 and s^2 of Miller (2024). Missing values are dropped.
    """
    task_arr = np.asarray(tasks, dtype=object)
    vals = float_array(values, "values")
    same_length(tasks=task_arr, values=vals)
    keep = ~np.isnan(vals)
    labels, inverse = np.unique(task_arr[keep].astype(str), return_inverse=True)
    v = vals[keep]
    t = labels.size
    if t < 2:
        raise ValueError(f"need at least 2 tasks to split variance, got {t}")
    counts = np.bincount(inverse, minlength=t).astype(np.float64)
    means = np.bincount(inverse, weights=v, minlength=t) / counts
    squares = np.bincount(inverse, weights=(v - means[inverse]) ** 2, minlength=t)
    multi = counts >= 2
    if not multi.any():
        raise ValueError("need at least one task with 2 or more runs to estimate within-task variance")
    within_t = np.full(t, np.nan)
    within_t[multi] = squares[multi] / (counts[multi] - 1)
    within = float(within_t[multi].mean())
    # tasks with one run borrow the pooled within-task variance for the correction term
    correction = float(np.mean(np.where(multi, within_t, within) / counts))
    between = max(0.0, float(means.var(ddof=1)) - correction)
    return VarianceSplit(
        between=between,
        within=within,
        tasks=int(t),
        runs_per_task=float(counts.mean()),
        dropped=int((~keep).sum()),
    )
