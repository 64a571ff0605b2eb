"""A factor's effect: the difference between two arms' mean scores, with its SE, interval and in run SDs."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from orchestrator.stats._checks import (
    Seed,
    check_confidence,
    check_resamples,
    float_array,
    percentile_interval,
    rng_from,
)


@dataclass(frozen=True)
class MeanDifference:
    """mean(a) - mean(b) over two arms' runs."""

    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    estimate: float
    se: float
    z: float
    p_value: float
    low: float
    high: float
    dropped: int


def mean_difference(
    a: ArrayLike, b: ArrayLike, *, n_resamples: int = 20_000, seed: Seed, confidence: float = 0.95
) -> MeanDifference:
    """By how much does arm a's mean score exceed arm b's, and how well is that known?

    The estimate is mean(a) - mean(b); its SE is sqrt(var_a/n_a + var_b/n_b) (sample variances), with a
    two-sided normal p-value (Welch's z); the interval is a percentile bootstrap resampling each arm's runs
    apart. Each arm is sorted before resampling, so the interval does not depend on the runs' order.
    Missing scores are dropped and counted.
    """
    check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    x, y = float_array(a, "a"), float_array(b, "b")
    dropped = int(np.isnan(x).sum() + np.isnan(y).sum())
    x, y = np.sort(x[~np.isnan(x)]), np.sort(y[~np.isnan(y)])
    if x.size < 2 or y.size < 2:
        raise ValueError(f"each arm needs at least 2 scored runs, got {x.size} and {y.size}")
    est = float(x.mean() - y.mean())
    se = math.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    from scipy import stats  # lazy: `import orchestrator.stats` must stay light

    z = est / se if se > 0 else (math.inf if est else 0.0)
    p = float(min(1.0, 2 * stats.norm.sf(abs(z))))
    rng = rng_from(seed)
    boot = np.empty(n_resamples)
    block = max(1, 2_000_000 // (x.size + y.size))
    for start in range(0, n_resamples, block):
        size = min(n_resamples, start + block) - start
        bx = x[rng.integers(0, x.size, size=(size, x.size))].mean(axis=1)
        by = y[rng.integers(0, y.size, size=(size, y.size))].mean(axis=1)
        boot[start : start + size] = bx - by
    lo, hi = percentile_interval(boot, confidence)
    return MeanDifference(
        n_a=int(x.size), n_b=int(y.size), mean_a=float(x.mean()), mean_b=float(y.mean()), estimate=est,
        se=se, z=z, p_value=p, low=lo, high=hi, dropped=dropped,
    )
