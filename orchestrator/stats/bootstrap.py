"""The bootstrap: resample tasks with all their runs (or runs, when there is one task)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import (
    Seed,
    check_confidence,
    check_resamples,
    float_array,
    percentile_interval,
    rng_from,
    same_length,
)

#: resampled rows per block, so 20,000 resamples of 300 tasks never hold more than this many indices
_BLOCK_CELLS = 2_000_000

Weighting = Literal["task", "run"]


@dataclass(frozen=True)
class TaskTotals:
    """Runs pre-aggregated by task: what the task bootstrap resamples."""

    tasks: NDArray[np.object_]
    sums: NDArray[np.float64]
    counts: NDArray[np.int64]
    dropped: int

    @property
    def means(self) -> NDArray[np.float64]:
        return self.sums / self.counts


def totals_by_task(tasks: ArrayLike, values: ArrayLike) -> TaskTotals:
    """How many scored runs does each task have, and what do they add up to? Missing values are dropped."""
    task_arr = np.asarray(tasks, dtype=object)
    vals = float_array(values, "values")
    if task_arr.ndim != 1:
        raise ValueError("tasks must be one-dimensional")
    same_length(tasks=task_arr, values=vals)
    keep = ~np.isnan(vals)
    labels, inverse = np.unique(task_arr[keep].astype(str), return_inverse=True)
    counts = np.bincount(inverse, minlength=labels.size).astype(np.int64)
    # float64 already (weights make bincount sum floats; numpy's stubs only know the integer count)
    sums = np.bincount(inverse, weights=vals[keep], minlength=labels.size).astype(np.float64, copy=False)
    return TaskTotals(tasks=labels.astype(object), sums=sums, counts=counts, dropped=int((~keep).sum()))


def resample_indices(n: int, n_resamples: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Which of n units does each resample draw? An (n_resamples, n) matrix of indices with replacement."""
    return rng.integers(0, n, size=(n_resamples, n))


#: block heights are multiples of this: numpy's row reductions treat a 1-row block as a 1-D array
#: (another summation order) and OpenBLAS's gemv handles rows four at a time, so blocks that start on
#: a multiple of 4 and are never shorter than 4 rows give every row the arithmetic of the whole matrix
_ROW_UNIT = 4


def block_rows(n: int, cells: int | None = None) -> int:
    """How many resample rows of n units go in one block of about `cells` cells (default `_BLOCK_CELLS`)?"""
    fit = (_BLOCK_CELLS if cells is None else cells) // max(1, n)
    return max(_ROW_UNIT, fit - fit % _ROW_UNIT)


def row_blocks(n_resamples: int, rows: int) -> list[tuple[int, int]]:
    """Consecutive (start, stop) row ranges of height `rows`, a short tail folded into the block before it."""
    bounds = [(start, min(n_resamples, start + rows)) for start in range(0, n_resamples, rows)]
    if len(bounds) > 1 and bounds[-1][1] - bounds[-1][0] < _ROW_UNIT:
        bounds[-2:] = [(bounds[-2][0], n_resamples)]
    return bounds


def _row_counts(idx: NDArray[np.int64], n: int) -> NDArray[np.int64]:
    rows = idx.shape[0]
    flat = (idx + (np.arange(rows) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n)


def resample_count_blocks(
    n: int, n_resamples: int, rng: np.random.Generator, *, rows: int | None = None
) -> Iterator[tuple[int, int, NDArray[np.int64]]]:
    """`resample_counts` a block of rows at a time: (start, stop, counts[start:stop]) in order.

    The blocks draw exactly the numbers `resample_counts` draws, in the same order (numpy's bounded
    integers fill C order and keep their spare 32 bits in the bit generator, so one (R, n) call and
    consecutive (r, n) calls give the same stream): the figures do not depend on the block size, and
    no n_resamples x n matrix is ever held. `rows` defaults to `block_rows(n)`.
    """
    for start, stop in row_blocks(n_resamples, block_rows(n) if rows is None else max(1, int(rows))):
        yield start, stop, _row_counts(rng.integers(0, n, size=(stop - start, n)), n)


def resample_counts(n: int, n_resamples: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """How often does each resample draw each of n units? An (n_resamples, n) count matrix, rows sum to n.

    Dense: for small n only; the statistics that run at a study's scale use `resample_count_blocks`.
    """
    blocks = [counts for _, _, counts in resample_count_blocks(n, n_resamples, rng)]
    return np.concatenate(blocks) if blocks else np.zeros((0, n), dtype=np.int64)


def task_bootstrap_draws(
    sums: ArrayLike,
    counts: ArrayLike,
    *,
    n_resamples: int,
    seed: Seed,
    weighting: Weighting = "task",
) -> NDArray[np.float64]:
    """What would the mean score be on other task sets like this one? Resampled means, tasks drawn whole.

    Each resample draws as many tasks as there are, with replacement, keeping all runs of each drawn task.
    weighting="task" averages task means (each task counts once); "run" pools runs (tasks with more runs
    weigh more). Works on per-task totals, so the cost does not depend on the number of runs.
    """
    s = float_array(sums, "sums")
    c = float_array(counts, "counts")
    same_length(sums=s, counts=c)
    if s.size == 0:
        raise ValueError("need at least one task")
    if (c <= 0).any() or np.isnan(s).any():
        raise ValueError("every task needs at least one scored run and a finite sum")
    if weighting not in ("task", "run"):
        raise ValueError(f"weighting must be 'task' or 'run', got {weighting!r}")
    n_resamples = check_resamples(n_resamples)
    rng = rng_from(seed)
    n = s.size
    means = s / c
    out = np.empty(n_resamples)
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        idx = rng.integers(0, n, size=(stop - start, n))
        if weighting == "task":
            out[start:stop] = means[idx].mean(axis=1)
        else:
            out[start:stop] = s[idx].sum(axis=1) / c[idx].sum(axis=1)
    return out


@dataclass(frozen=True)
class BootstrapInterval:
    """A point estimate with a percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    se: float
    n_resamples: int
    units: int
    dropped: int


def task_bootstrap(
    tasks: ArrayLike,
    values: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    confidence: float = 0.95,
    weighting: Weighting = "task",
) -> BootstrapInterval:
    """How far could the mean score move on another draw of tasks? Task bootstrap percentile interval.

    Tasks are resampled with all their runs (the runs of one task are not independent draws of the
    benchmark). Runs with a missing value are dropped and counted.
    """
    check_confidence(confidence)
    totals = totals_by_task(tasks, values)
    if totals.counts.size == 0:
        raise ValueError("no scored run to bootstrap")
    draws = task_bootstrap_draws(
        totals.sums, totals.counts, n_resamples=n_resamples, seed=seed, weighting=weighting
    )
    if weighting == "task":
        estimate = float(totals.means.mean())
    else:
        estimate = float(totals.sums.sum() / totals.counts.sum())
    low, high = percentile_interval(draws, confidence)
    return BootstrapInterval(
        estimate=estimate,
        low=low,
        high=high,
        se=float(draws.std(ddof=1)) if draws.size > 1 else float("nan"),
        n_resamples=draws.size,
        units=int(totals.counts.size),
        dropped=totals.dropped,
    )


def bootstrap_mean(
    values: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    confidence: float = 0.95,
) -> BootstrapInterval:
    """How far could the mean of these runs move on another set of runs? Percentile bootstrap over runs.

    Missing values are dropped and counted. Agrees with scipy.stats.bootstrap(method="percentile").
    """
    check_confidence(confidence)
    vals = float_array(values, "values")
    keep = ~np.isnan(vals)
    data = vals[keep]
    if data.size == 0:
        raise ValueError("no scored run to bootstrap")
    draws = task_bootstrap_draws(data, np.ones(data.size), n_resamples=n_resamples, seed=seed)
    low, high = percentile_interval(draws, confidence)
    return BootstrapInterval(
        estimate=float(data.mean()),
        low=low,
        high=high,
        se=float(draws.std(ddof=1)) if draws.size > 1 else float("nan"),
        n_resamples=draws.size,
        units=int(data.size),
        dropped=int((~keep).sum()),
    )
