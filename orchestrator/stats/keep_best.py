"""Keeping the best compliant of k attempts: the exact policy, its gain over one attempt, and the oracle.

The kept artifact is chosen by its eval score (what the agent or user sees); its value is its holdout
score. The oracle chooses on the holdout itself, which no one can do, and bounds what choosing can buy.
Attempts are drawn with replacement from the observed runs.

"Best" follows the metric's direction (`higher_is_better`; specs/tasktypes.py): for RMSE or a log loss the
lowest eval score is kept. Kept values stay in the metric's own units; a gain is the improvement over one
attempt in the metric's direction (for a lower-is-better metric, one attempt's value minus the kept one),
so a positive gain is always better.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from orchestrator.stats.bootstrap import resample_count_blocks

DEFAULT_KS = (1, 3, 5, 10)


@dataclass(frozen=True)
class KeptDistribution:
    """The exact distribution of the kept artifact's value after k attempts."""

    k: int
    n: int
    noncompliant: int
    p_none: float
    values: NDArray[np.float64]
    probabilities: NDArray[np.float64]

    @property
    def p_any(self) -> float:
        """Chance that at least one of the k attempts is compliant (1 - P(no artifact))."""
        return 1.0 - self.p_none

    @property
    def mean(self) -> float:
        return float(self.values @ self.probabilities) if self.values.size else float("nan")

    def quantile(self, q: float) -> float:
        """Smallest kept value whose cumulative probability reaches q (given at least one compliant)."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"q must be in [0, 1], got {q}")
        if self.values.size == 0:
            return float("nan")
        order = np.argsort(self.values, kind="stable")
        cdf = np.cumsum(self.probabilities[order])
        i = int(np.searchsorted(cdf, q - 1e-12, side="left"))
        return float(self.values[order][min(i, order.size - 1)])


def _inputs(
    rank_by: ArrayLike, values: ArrayLike, compliant: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    r = float_array(rank_by, "rank_by")
    v = float_array(values, "values")
    c = bool_array(compliant, "compliant")
    same_length(rank_by=r, values=v, compliant=c)
    if r.size == 0:
        raise ValueError("need at least one attempt")
    if (np.isnan(r[c]) | np.isnan(v[c])).any():
        raise ValueError(
            "every compliant attempt needs a rank score and a value; mark attempts that "
            "delivered nothing usable as not compliant"
        )
    return r, v, c


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    return int(k)


def sign_of(higher_is_better: bool) -> float:
    """The factor that turns a metric into a higher-is-better one for ranking (+1 or -1)."""
    return 1.0 if higher_is_better else -1.0


def best_of_k(rank_by: ArrayLike, values: ArrayLike, compliant: ArrayLike, k: int, *,
              higher_is_better: bool = True) -> KeptDistribution:
    """If we make k attempts and keep the best compliant one, what do we end up with?

    Exact: with n attempts of which m are not compliant, rank the compliant ones r = 1..n-m by
    `rank_by` (ascending, worst first: for a lower-is-better metric, descending); P(keep r) = ((m+r)/n)^k - ((m+r-1)/n)^k and P(none) = (m/n)^k.
    Attempts tied on `rank_by` share their group's probability equally (a fair coin breaks ties).
    The returned probabilities are conditional on keeping something (they sum to 1 unless P(none) = 1).
    """
    k = _check_k(k)
    r, v, c = _inputs(rank_by, values, compliant)
    n = r.size
    m = int((~c).sum())
    p_none = (m / n) ** k
    rc, vc = r[c] * sign_of(higher_is_better), v[c]
    if rc.size == 0:
        return KeptDistribution(k=k, n=n, noncompliant=m, p_none=1.0, values=vc, probabilities=vc)
    order = np.argsort(rc, kind="stable")
    rc, vc = rc[order], vc[order]
    _, starts, sizes = np.unique(rc, return_index=True, return_counts=True)
    top = m + starts + sizes  # cumulative attempts at or below each tie group
    group_p = (top / n) ** k - ((top - sizes) / n) ** k
    probs = np.repeat(group_p / sizes, sizes) / (1.0 - p_none)
    return KeptDistribution(k=k, n=n, noncompliant=m, p_none=p_none, values=vc, probabilities=probs)


def _expected_kept(
    weights: NDArray[np.float64],
    values: NDArray[np.float64],
    group_starts: NDArray[np.int64],
    noncompliant_weight: NDArray[np.float64],
    n: int,
    ks: Sequence[int],
) -> NDArray[np.float64]:
    """Expected kept value for each weighting row and each k: shape (rows, len(ks)), NaN if nothing kept."""
    gw = np.add.reduceat(weights, group_starts, axis=1)
    gv = np.add.reduceat(weights * values, group_starts, axis=1)
    gmean = np.divide(gv, gw, out=np.zeros_like(gv), where=gw > 0)
    top = noncompliant_weight[:, None] + np.cumsum(gw, axis=1)
    bottom = top - gw
    out = np.full((weights.shape[0], len(ks)), np.nan)
    any_compliant = gw.sum(axis=1) > 0
    for j, k in enumerate(ks):
        p = (top / n) ** k - (bottom / n) ** k
        p_none = (noncompliant_weight / n) ** k
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, j] = np.where(any_compliant, (p * gmean).sum(axis=1) / (1.0 - p_none), np.nan)
    return out


@dataclass(frozen=True)
class BestOfKRow:
    """One row of the best-of-k table."""

    k: int
    p_any: float
    p_none: float
    mean_kept: float
    median_kept: float
    p05_kept: float
    p95_kept: float
    gain: float
    gain_low: float
    gain_high: float
    oracle_mean_kept: float
    oracle_gain: float
    oracle_gain_low: float
    oracle_gain_high: float
    dropped_resamples: int


def _gain_draws(
    r: NDArray[np.float64], v: NDArray[np.float64], c: NDArray[np.bool_], ks: Sequence[int], counts: NDArray,
    sign: float = 1.0,
) -> NDArray[np.float64]:
    """Gain over one attempt for each count row (bootstrap resample) and each k. `r` is already signed
    (higher is better); `sign` turns the value's change into an improvement."""
    n = r.size
    comp = np.flatnonzero(c)
    if comp.size == 0:
        return np.full((counts.shape[0], len(ks)), np.nan)
    order = comp[np.argsort(r[comp], kind="stable")]
    _, starts = np.unique(r[order], return_index=True)
    w = counts[:, order].astype(np.float64)
    noncompliant = counts[:, ~c].sum(axis=1).astype(np.float64)
    kept = _expected_kept(w, v[order], starts, noncompliant, n, ks)
    wsum = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        one = np.where(wsum > 0, (w * v[order]).sum(axis=1) / wsum, np.nan)
    gain = sign * (kept - one[:, None])
    for j, k in enumerate(ks):
        if k == 1:  # identical by definition; keep rounding noise out of the table
            gain[:, j] = np.where(np.isnan(gain[:, j]), np.nan, 0.0)
    return gain


def best_of_k_table(
    rank_by: ArrayLike,
    values: ArrayLike,
    compliant: ArrayLike,
    *,
    ks: Sequence[int] = DEFAULT_KS,
    n_resamples: int = 2_000,
    seed: Seed,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> list[BestOfKRow]:
    """What does keeping the best compliant of k attempts buy over one attempt, and how sure are we?

    For each k: the chance of at least one compliant attempt, the median and 5th/95th percentile of
    the kept value (given one is kept), the gain in expected kept value over k = 1 with a percentile
    interval from an outer bootstrap (resampling the attempts themselves), and the same for an oracle
    that ranks on `values` instead of `rank_by`. Resamples with no compliant attempt are dropped and
    counted. "Best" and the gains follow `higher_is_better` (see the module docstring).
    """
    ks = [_check_k(k) for k in ks]
    if not ks:
        raise ValueError("ks must not be empty")
    check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    r, v, c = _inputs(rank_by, values, compliant)
    rng = rng_from(seed)
    s = sign_of(higher_is_better)
    ones = np.ones((1, r.size), dtype=np.int64)
    point = _gain_draws(s * r, v, c, ks, ones, s)[0]
    oracle_point = _gain_draws(s * v, v, c, ks, ones, s)[0]
    # a block of resample rows at a time: memory is O(block x n), never n_resamples x n; each row's gain
    # depends on its own counts only, so the draws are those of the whole matrix at once
    draws = np.empty((n_resamples, len(ks)))
    oracle_draws = np.empty((n_resamples, len(ks)))
    for start, stop, counts in resample_count_blocks(r.size, n_resamples, rng):
        draws[start:stop] = _gain_draws(s * r, v, c, ks, counts, s)
        oracle_draws[start:stop] = _gain_draws(s * v, v, c, ks, counts, s)
    rows = []
    for j, k in enumerate(ks):
        dist = best_of_k(r, v, c, k, higher_is_better=higher_is_better)
        oracle = best_of_k(v, v, c, k, higher_is_better=higher_is_better)
        d = draws[:, j]
        od = oracle_draws[:, j]
        ok = ~np.isnan(d)
        lo, hi = percentile_interval(d[ok], confidence)
        olo, ohi = percentile_interval(od[~np.isnan(od)], confidence)
        rows.append(
            BestOfKRow(
                k=k,
                p_any=dist.p_any,
                p_none=dist.p_none,
                mean_kept=dist.mean,
                median_kept=dist.quantile(0.5),
                p05_kept=dist.quantile(0.05),
                p95_kept=dist.quantile(0.95),
                gain=float(point[j]),
                gain_low=lo,
                gain_high=hi,
                oracle_mean_kept=oracle.mean,
                oracle_gain=float(oracle_point[j]),
                oracle_gain_low=olo,
                oracle_gain_high=ohi,
                dropped_resamples=int((~ok).sum()),
            )
        )
    return rows
