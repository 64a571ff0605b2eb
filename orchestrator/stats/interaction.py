"""Interaction contrasts: does the effect of one factor (say, the model) depend on the other (the agent)?"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
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
    """(cell[row, col] - cell[row, col0]) - (cell[against, col] - cell[against, col0])."""

    row: Hashable
    col: Hashable
    against: Hashable
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


def _levels(cells: Mapping[tuple[Hashable, Hashable], ArrayLike], axis: int, order: Sequence[Hashable] | None) -> list[Hashable]:
    found: list[Hashable] = []
    for key in cells:
        if not (isinstance(key, tuple) and len(key) == 2):
            raise ValueError(f"cell keys must be (row, col) pairs, got {key!r}")
        if key[axis] not in found:
            found.append(key[axis])
    if order is None:  # sorted, never the order the cells (or the runs behind them) came in
        return sorted(found, key=str)
    order = list(order)
    if sorted(map(str, order)) != sorted(map(str, found)):
        raise ValueError(f"level order {order!r} must name exactly the levels {sorted(found, key=str)!r}")
    return order


def interaction_contrasts(
    cells: Mapping[tuple[Hashable, Hashable], ArrayLike],
    *,
    n_resamples: int = 5_000,
    seed: Seed,
    confidence: float = 0.95,
    rows: Sequence[Hashable] | None = None,
    cols: Sequence[Hashable] | None = None,
    pairwise: bool = False,
) -> InteractionResult:
    """Does changing the column factor help more under some row levels than under others?

    For a full grid of cells keyed (row, col) holding run scores: differences in differences against the
    reference column (the first of `cols`; default: levels sorted), with a normal SE from the cell
    variances, a two-sided z p-value, the Holm-adjusted p-value over the family shown, a percentile
    interval from resampling runs within cells (pointwise), and the joint Wald test of no interaction
    on (R-1)(C-1) df. By default each row is compared with the reference row (the first of `rows`);
    with `pairwise`, every pair of rows (a before b in `rows`: a's change minus b's), all in one Holm
    family. Cells are resampled over their values sorted, so the result does not depend on the order of
    the runs. Missing scores are dropped.
    """
    check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    rows = _levels(cells, 0, rows)
    cols = _levels(cells, 1, cols)
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
            v = np.sort(v[~np.isnan(v)])
            if v.size < 2:
                raise ValueError(f"cell ({rl!r}, {cl!r}) needs at least 2 scored runs, got {v.size}")
            data.append(v)
    n_cols = len(cols)
    means = np.array([v.mean() for v in data])
    var_of_mean = np.array([v.var(ddof=1) / v.size for v in data])
    if pairwise:
        row_pairs = [(a, b) for a in range(len(rows)) for b in range(a + 1, len(rows))]
    else:
        row_pairs = [(i, 0) for i in range(1, len(rows))]
    pairs = [(a, b, j) for a, b in row_pairs for j in range(1, n_cols)]
    labels = [(rows[a], cols[j], rows[b]) for a, b, j in pairs]
    contrast = np.zeros((len(labels), len(data)))
    for q, (a, b, j) in enumerate(pairs):
        contrast[q, a * n_cols + j] += 1
        contrast[q, a * n_cols] -= 1
        contrast[q, b * n_cols + j] -= 1
        contrast[q, b * n_cols] += 1
    basis = np.zeros(((len(rows) - 1) * (n_cols - 1), len(data)))  # the Wald test's (R-1)(C-1) contrasts
    for q, (i, j) in enumerate((i, j) for i in range(1, len(rows)) for j in range(1, n_cols)):
        basis[q, [i * n_cols + j, i * n_cols, j, 0]] = (1, -1, -1, 1)
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
    for q, (rl, cl, other) in enumerate(labels):
        lo, hi = percentile_interval(boot_theta[:, q], confidence)
        contrasts.append(
            Contrast(
                row=rl,
                col=cl,
                against=other,
                estimate=float(theta[q]),
                se=float(se[q]),
                z=float(z[q]),
                p_value=float(p[q]),
                p_holm=float(p_holm[q]),
                low=lo,
                high=hi,
            )
        )
    basis_theta = basis @ means
    basis_cov = basis @ np.diag(var_of_mean) @ basis.T
    if np.all(np.isfinite(basis_cov)) and np.linalg.matrix_rank(basis_cov) == basis_cov.shape[0]:
        wald = wald_test(basis_theta, basis_cov)
    else:
        wald = WaldTest(statistic=math.nan, df=basis.shape[0], p_value=math.nan)
    return InteractionResult(
        reference_row=rows[0], reference_col=cols[0], contrasts=contrasts, wald=wald, dropped=dropped
    )
