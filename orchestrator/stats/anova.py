"""How much of the spread lies between groups (tasks, nodes, slots), against what random grouping gives."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import Seed, check_resamples, float_array, rng_from, same_length

#: permuted values per block, so a block never holds more than this many cells
_BLOCK_CELLS = 2_000_000


@dataclass(frozen=True)
class GroupShare:
    """One-way ANOVA of values by group, with a permutation null for the between-group share."""

    f: float
    df_between: int
    df_within: int
    #: between-group share of the total sum of squares (eta squared)
    share: float
    #: permutation p-value of F (equivalently of the share), (1 + hits) / (1 + n_resamples)
    p_value: float
    #: p-value of F from the F distribution (assumes normal errors and equal variances)
    f_p_value: float
    #: mean share over the permutations: what random grouping gives ((g - 1) / (n - 1) in expectation)
    null_mean_share: float
    threshold: float | None
    #: set when a declared threshold sits at or below the null's mean (random grouping reaches it)
    warning: str | None
    groups: int
    n: int
    n_resamples: int
    dropped: int


def _missing(label: object) -> bool:
    return label is None or (isinstance(label, float) and np.isnan(label))


def _sums_of_squares(values: NDArray[np.float64], onehot: NDArray[np.float64], sizes: NDArray[np.float64]):
    group_sums = values @ onehot
    total = values.sum(axis=-1)
    return (group_sums**2 / sizes).sum(axis=-1) - total**2 / values.shape[-1]


def group_share(
    groups: ArrayLike,
    values: ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: Seed,
    threshold: float | None = None,
) -> GroupShare:
    """How much of the spread of these values lies between groups, and more than random grouping gives?

    One-way ANOVA: F = (SS_between / (g - 1)) / (SS_within / (n - g)), share = SS_between / SS_total.
    The permutation null shuffles values across groups (group sizes kept); it gives the p-value and the
    null's mean share, which is (g - 1) / (n - 1) in expectation, not 0: with 50 tasks of 4 pairs,
    random grouping alone puts about 25% of the variance between tasks. A declared `threshold` for the
    share that sits at or below the null's mean gets a warning. Values missing (NaN) are dropped and
    counted. F and its F-distribution p equal scipy.stats.f_oneway.
    """
    from scipy import stats

    vals = float_array(values, "values")
    group_arr = np.asarray(groups, dtype=object)
    if group_arr.ndim != 1:
        raise ValueError("groups must be one-dimensional")
    same_length(groups=group_arr, values=vals)
    keep = ~np.isnan(vals) & np.array([not _missing(g) for g in group_arr], dtype=bool)
    vals, group_arr = vals[keep], group_arr[keep]
    labels, inverse = np.unique(group_arr.astype(str), return_inverse=True)
    g, n = labels.size, vals.size
    if g < 2:
        raise ValueError(f"need at least 2 groups, got {g}")
    if n <= g:
        raise ValueError(
            f"need more values than groups to estimate the spread within groups ({n} values, {g} groups)"
        )
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be a share in [0, 1], got {threshold}")
    n_resamples = check_resamples(n_resamples)
    if np.ptp(vals) == 0:
        raise ValueError("the share of variance is undefined when every value is the same")
    ss_total = float(((vals - vals.mean()) ** 2).sum())
    onehot = np.zeros((n, g))
    onehot[np.arange(n), inverse] = 1.0
    sizes = onehot.sum(axis=0)
    ss_between = float(_sums_of_squares(vals, onehot, sizes))
    ss_within = ss_total - ss_between
    df_b, df_w = g - 1, n - g
    f = (ss_between / df_b) / (ss_within / df_w) if ss_within > 0 else float("inf")
    share = ss_between / ss_total
    rng = rng_from(seed)
    hits = 0
    null_sum = 0.0
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, n_resamples, block):
        size = min(n_resamples, start + block) - start
        shuffled = rng.permuted(np.broadcast_to(vals, (size, n)), axis=1)
        null = _sums_of_squares(shuffled, onehot, sizes) / ss_total
        hits += int(np.count_nonzero(null >= share - 1e-12))
        null_sum += float(null.sum())
    null_mean = null_sum / n_resamples
    warning = None
    if threshold is not None and threshold <= null_mean:
        warning = (
            f"the declared threshold {threshold:.3f} sits at or below the null's mean share {null_mean:.3f}: "
            f"random grouping of {n} values into {g} groups reaches it"
        )
    return GroupShare(
        f=float(f),
        df_between=df_b,
        df_within=df_w,
        share=float(share),
        p_value=(hits + 1) / (n_resamples + 1),
        f_p_value=float(stats.f.sf(f, df_b, df_w)) if np.isfinite(f) else 0.0,
        null_mean_share=float(null_mean),
        threshold=threshold,
        warning=warning,
        groups=int(g),
        n=int(n),
        n_resamples=n_resamples,
        dropped=int((~keep).sum()),
    )
