"""Interaction contrasts: does the effect of one factor (say, the model) depend on the other (the agent)?"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
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


def holm_adjust(p_values: ArrayLike) -> NDArray[np.float64]:
    """After testing several contrasts at once, which p-values still hold up? Holm's step-down adjustment.

    Holm (1979): sort ascending, multiply the i-th smallest by (m - i + 1), carry the running maximum,
    cap at 1. Agrees with statsmodels `multipletests(method="holm")`.
    """
    p = float_array(p_values, "p_values")
    if np.isnan(p).any() or ((p < 0) | (p > 1)).any():
        raise ValueError("p-values must lie in [0, 1] with none missing")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(scaled)
    return out


@dataclass(frozen=True)
class WaldTest:
    statistic: float
    df: int
    p_value: float


def wald_test(estimates: ArrayLike, covariance: ArrayLike) -> WaldTest:
    """Are these contrasts jointly zero? Wald chi-square test theta' V^-1 theta on len(theta) df."""
    theta = float_array(estimates, "estimates")
    cov = np.asarray(covariance, dtype=np.float64)
    if cov.shape != (theta.size, theta.size):
        raise ValueError(f"covariance must be {theta.size}x{theta.size}, got {cov.shape}")
    if theta.size == 0 or np.isnan(theta).any() or not np.isfinite(cov).all():
        raise ValueError("need at least one finite estimate and a finite covariance")
    try:
        stat = float(theta @ np.linalg.solve(cov, theta))
    except np.linalg.LinAlgError:
        raise ValueError("covariance of the contrasts is singular") from None
    from scipy import stats  # lazy: `import orchestrator.stats` must stay light

    return WaldTest(statistic=stat, df=int(theta.size), p_value=float(stats.chi2.sf(stat, theta.size)))


@dataclass(frozen=True)
class Contrast:
    """(cell[row, col] - cell[row, col0]) - (cell[row0, col] - cell[row0, col0])."""

    row: Hashable
    col: Hashable
    estimate: float
    se: float
    z: float
    p_value: float
    p_holm: float
    low: float
    high: float


@dataclass(frozen=True)
class InteractionResult:
    reference_row: Hashable
    reference_col: Hashable
    contrasts: list[Contrast]
    wald: WaldTest
    dropped: int


def interaction_contrasts(
    cells: Mapping[tuple[Hashable, Hashable], ArrayLike],
    *,
    n_resamples: int = 5_000,
    seed: Seed,
    confidence: float = 0.95,
) -> InteractionResult:
    """Does changing the column factor help more under some row levels than under the reference row?

    For a full grid of cells keyed (row, col) holding run scores, each difference in differences
    against the first row and first column (in order of appearance), with a normal SE from the cell
    variances, a two-sided z p-value, the Holm-adjusted p-value, a percentile interval from resampling
    runs within cells, and the joint Wald test of all (R-1)(C-1) contrasts. Missing scores are dropped.
    """
    check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    rows: list[Hashable] = []
    cols: list[Hashable] = []
    for key in cells:
        if not (isinstance(key, tuple) and len(key) == 2):
            raise ValueError(f"cell keys must be (row, col) pairs, got {key!r}")
        if key[0] not in rows:
            rows.append(key[0])
        if key[1] not in cols:
            cols.append(key[1])
    if len(rows) < 2 or len(cols) < 2:
        raise ValueError(f"need at least 2 levels of each factor, got {len(rows)} x {len(cols)}")
    data: list[NDArray[np.float64]] = []
    dropped = 0
    for rl in rows:
        for cl in cols:
            if (rl, cl) not in cells:
                raise ValueError(f"the grid is incomplete: no cell ({rl!r}, {cl!r})")
            v = float_array(cells[(rl, cl)], f"cell ({rl!r}, {cl!r})")
            dropped += int(np.isnan(v).sum())
            v = v[~np.isnan(v)]
            if v.size < 2:
                raise ValueError(f"cell ({rl!r}, {cl!r}) needs at least 2 scored runs, got {v.size}")
            data.append(v)
    n_cols = len(cols)
    means = np.array([v.mean() for v in data])
    var_of_mean = np.array([v.var(ddof=1) / v.size for v in data])
    labels = [(rows[i], cols[j]) for i in range(1, len(rows)) for j in range(1, n_cols)]
    contrast = np.zeros((len(labels), len(data)))
    for q, (i, j) in enumerate((i, j) for i in range(1, len(rows)) for j in range(1, n_cols)):
        contrast[q, i * n_cols + j] += 1
        contrast[q, i * n_cols] -= 1
        contrast[q, j] -= 1
        contrast[q, 0] += 1
    theta = contrast @ means
    cov = contrast @ np.diag(var_of_mean) @ contrast.T
    se = np.sqrt(np.diag(cov))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, theta / se, np.where(theta != 0, np.inf, 0.0))
    from scipy import stats

    p = np.minimum(1.0, 2.0 * stats.norm.sf(np.abs(z)))
    p_holm = holm_adjust(p)
    rng = rng_from(seed)
    boot_means = np.column_stack(
        [v[rng.integers(0, v.size, size=(n_resamples, v.size))].mean(axis=1) for v in data]
    )
    boot_theta = boot_means @ contrast.T
    contrasts = []
    for q, (rl, cl) in enumerate(labels):
        lo, hi = percentile_interval(boot_theta[:, q], confidence)
        contrasts.append(
            Contrast(
                row=rl,
                col=cl,
                estimate=float(theta[q]),
                se=float(se[q]),
                z=float(z[q]),
                p_value=float(p[q]),
                p_holm=float(p_holm[q]),
                low=lo,
                high=hi,
            )
        )
    if np.all(np.isfinite(cov)) and np.linalg.matrix_rank(cov) == cov.shape[0]:
        wald = wald_test(theta, cov)
    else:
        wald = WaldTest(statistic=math.nan, df=len(labels), p_value=math.nan)
    return InteractionResult(
        reference_row=rows[0], reference_col=cols[0], contrasts=contrasts, wald=wald, dropped=dropped
    )
