"""Keeping the best compliant of k attempts, pooled over several pairings (weighted equally).

A team that picks one of the pairings at random and makes k attempts with it gets, per pairing, the
exact kept distribution of `keep_best.best_of_k`; pooling mixes those distributions with equal weight
on each pairing's attempts. The kept value's percentiles are conditional on an artifact being returned,
so a pairing weighs in proportion to its chance of returning one (at k = 1 that is its compliant share:
with as many attempts in each pairing every compliant run then weighs the same, which is the paper's
"one attempt" row). The gain is the
gain in the median (the paper's estimand, beside the median columns) and, apart and named, the gain in
the mean; both carry a percentile interval from an outer bootstrap that resamples each pairing's runs.
The chance of at least one compliant attempt is the pairings' mean of 1 - (m/n)^k, with a one-sided
lower bound from the same bootstrap and, at k = 1, the Wilson interval of the pooled compliant share.

"Best" follows the metric's direction (`higher_is_better`), and a gain is an improvement in that
direction, as in `keep_best`; the kept values and their percentiles stay in the metric's units.

Each pairing's attempts are put in a canonical order (rank score, value, compliance) before resampling,
so the result does not depend on the order the runs were given in.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import Seed, check_confidence, check_resamples, rng_from
from orchestrator.stats.bootstrap import block_rows, resample_count_blocks, row_blocks
from orchestrator.stats.keep_best import DEFAULT_KS, _check_k, _inputs, sign_of


@dataclass(frozen=True)
class PooledBestOfKRow:
    """One k of the pooled best-of-k table."""

    k: int
    pairings: int
    p_any: float
    #: lower end of the two-sided `confidence` interval of p_any (outer bootstrap; the paper's "at least")
    p_any_low: float
    #: Wilson interval of the pooled compliant share (k = 1 only, NaN otherwise)
    p_any_wilson_low: float
    p_any_wilson_high: float
    median_kept: float
    p05_kept: float
    p95_kept: float
    mean_kept: float
    gain_median: float
    gain_median_low: float
    gain_median_high: float
    gain_mean: float
    gain_mean_low: float
    gain_mean_high: float
    oracle_median_kept: float
    oracle_mean_kept: float


@dataclass(frozen=True)
class _Group:
    order_values: NDArray[np.float64]  # values of the compliant attempts, ascending by rank
    rank: NDArray[np.float64]  # signed: higher is better
    starts: NDArray[np.int64]  # tie-group starts among the compliant attempts
    compliant_idx: NDArray[np.int64]  # indices (canonical order) of the compliant attempts, by rank
    noncompliant_idx: NDArray[np.int64]
    n: int


def _canonical(rank: NDArray[np.float64], value: NDArray[np.float64], comp: NDArray[np.bool_]) -> NDArray[np.int64]:
    # NaN ranks/values (non-compliant attempts without an artifact) sort last; lexsort keys go last-first
    return np.lexsort((comp, np.nan_to_num(value, nan=np.inf), np.nan_to_num(rank, nan=np.inf)))


def _group(rank_by: ArrayLike, values: ArrayLike, compliant: ArrayLike, *, by_value: bool,
           sign: float = 1.0) -> _Group:
    r, v, c = _inputs(rank_by, values, compliant)
    order = _canonical(r, v, c)
    r, v, c = r[order], v[order], c[order]
    key = sign * (v if by_value else r)
    comp = np.flatnonzero(c)
    comp = comp[np.argsort(key[comp], kind="stable")]
    _, starts = np.unique(key[comp], return_index=True)
    return _Group(
        order_values=v[comp],
        rank=key[comp],
        starts=starts.astype(np.int64),
        compliant_idx=comp,
        noncompliant_idx=np.flatnonzero(~c),
        n=r.size,
    )


def _kept_weights(g: _Group, counts: NDArray[np.float64], k: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Unconditional probability that each compliant attempt is kept, per count row; and P(none) per row."""
    w = counts[:, g.compliant_idx]
    none_w = counts[:, g.noncompliant_idx].sum(axis=1)
    if w.shape[1] == 0:
        return w, np.ones(counts.shape[0])
    gw = np.add.reduceat(w, g.starts, axis=1)
    top = none_w[:, None] + np.cumsum(gw, axis=1)
    bottom = top - gw
    gp = (top / g.n) ** k - (bottom / g.n) ** k
    share = np.divide(w, np.repeat(gw, np.diff(np.append(g.starts, w.shape[1])), axis=1),
                      out=np.zeros_like(w), where=w > 0)
    probs = np.repeat(gp, np.diff(np.append(g.starts, w.shape[1])), axis=1) * share
    return probs, (none_w / g.n) ** k


def _weighted_quantiles(
    values: NDArray[np.float64], weights: NDArray[np.float64], qs: Sequence[float], order: NDArray[np.intp] | None = None
) -> NDArray[np.float64]:
    """Per weight row, the smallest value whose cumulative weight share reaches q (keep_best's rule).

    `order` is `values`' stable argsort when the caller already has it (it does not depend on the rows)."""
    order = np.argsort(values, kind="stable") if order is None else order
    v, w = values[order], weights[:, order]
    total = w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        cdf = np.cumsum(w, axis=1) / total
    out = np.full((w.shape[0], len(qs)), np.nan)
    ok = total[:, 0] > 0
    for j, q in enumerate(qs):
        idx = (cdf < q - 1e-12).sum(axis=1)
        out[ok, j] = v[np.minimum(idx[ok], v.size - 1)]
    return out


def _pooled(
    groups: Sequence[_Group], counts: Sequence[NDArray[np.float64]], k: int, order: NDArray[np.intp] | None = None
) -> dict[str, NDArray[np.float64]]:
    probs, p_none = zip(*(_kept_weights(g, c, k) for g, c in zip(groups, counts, strict=True)), strict=True)
    weights = np.concatenate(probs, axis=1)
    values = np.concatenate([g.order_values for g in groups])
    p_any = 1.0 - np.column_stack(p_none).mean(axis=1)
    q = _weighted_quantiles(values, weights, (0.5, 0.05, 0.95), order)
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(total > 0, weights @ values / total, np.nan)
    return {"p_any": p_any, "median": q[:, 0], "p05": q[:, 1], "p95": q[:, 2], "mean": mean}


_FIGURES = ("p_any", "median", "p05", "p95", "mean")


def _count_blocks(
    sizes: Sequence[int], n_resamples: int, rng: np.random.Generator
) -> Iterator[tuple[int, int, list[NDArray[np.float64]]]]:
    """Resample counts of every pairing, the same rows of each at a time: (start, stop, one block per pairing).

    The figures are those of drawing each pairing's whole (n_resamples, n) matrix in turn from `rng`
    (pairing after pairing), without holding any: a first pass runs a copy of the generator through the
    draws of every pairing but the last, noting where each pairing's draws begin; the second walks the
    pairings' streams side by side, a block of rows at a time. Random draws cost at most twice, memory
    stays O(block x attempts), and `rng` ends where drawing the matrices would have left it.
    """
    rows = block_rows(sum(sizes))
    starts: list[np.random.Generator] = []
    for n in sizes[:-1]:
        starts.append(copy.deepcopy(rng))
        for start, stop in row_blocks(n_resamples, rows):  # the same draws, not counted
            rng.integers(0, n, size=(stop - start, n))
    streams = [
        resample_count_blocks(n, n_resamples, g, rows=rows)
        for n, g in zip(sizes, [*starts, rng], strict=True)
    ]
    for blocks in zip(*streams, strict=True):
        start, stop = blocks[0][0], blocks[0][1]
        yield start, stop, [counts.astype(np.float64) for _, _, counts in blocks]


def pooled_best_of_k(
    groups: Sequence[tuple[ArrayLike, ArrayLike, ArrayLike]],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    n_resamples: int = 2_000,
    seed: Seed,
    confidence: float = 0.95,
    higher_is_better: bool = True,
) -> list[PooledBestOfKRow]:
    """If a team makes k attempts with one of these pairings and keeps the best compliant, what does it get?

    `groups` holds one (rank_by, values, compliant) triple per pairing, as for `best_of_k`. The pairings
    are weighted equally; percentiles of the kept value are conditional on an artifact being returned.
    Gains are over k = 1, in the median and in the mean, with percentile intervals from `n_resamples`
    outer bootstrap resamples of each pairing's runs; `p_any_low` is the one-sided `confidence` lower
    bound on the chance of at least one compliant attempt from the same resamples. "Best" and the gains
    follow `higher_is_better` (see the module docstring).
    """
    from orchestrator.stats.binary import wilson_interval

    ks = [_check_k(k) for k in ks]
    if not ks or not groups:
        raise ValueError("need at least one k and one pairing")
    check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    sign = sign_of(higher_is_better)
    policy = [_group(*g, by_value=False, sign=sign) for g in groups]
    oracle = [_group(*g, by_value=True, sign=sign) for g in groups]
    rng = rng_from(seed)
    ones = [np.ones((1, g.n)) for g in policy]
    # the oracle orders attempts by value; its count columns are the same attempts in the same canonical order
    point = {k: _pooled(policy, ones, k) for k in {1, *ks}}
    boot = {k: {name: np.empty(n_resamples) for name in _FIGURES} for k in {1, *ks}}
    # the kept values' sort is the same for every block and k: sorted once, not once per block per k
    order = np.argsort(np.concatenate([g.order_values for g in policy]), kind="stable")
    for start, stop, counts in _count_blocks([g.n for g in policy], n_resamples, rng):
        for k, figures in boot.items():
            for name, block in _pooled(policy, counts, k, order).items():
                figures[name][start:stop] = block
    oracle_point = {k: _pooled(oracle, ones, k) for k in ks}
    compliant_runs = sum(g.compliant_idx.size for g in policy)
    attempts = sum(g.n for g in policy)
    alpha = 1.0 - confidence
    rows = []
    for k in ks:
        gains = {}
        for name in ("median", "mean"):
            d = sign * (boot[k][name] - boot[1][name])
            d = d[~np.isnan(d)]
            lo, hi = (np.quantile(d, [alpha / 2, 1 - alpha / 2]) if d.size else (np.nan, np.nan))
            est = float(sign * (point[k][name][0] - point[1][name][0]))
            gains[name] = (0.0 if k == 1 else est, 0.0 if k == 1 else float(lo), 0.0 if k == 1 else float(hi))
        if k == 1:
            wl, wh = wilson_interval(compliant_runs, attempts, confidence=confidence)
        else:
            wl = wh = float("nan")
        rows.append(
            PooledBestOfKRow(
                k=k,
                pairings=len(policy),
                p_any=float(point[k]["p_any"][0]),
                p_any_low=float(np.quantile(boot[k]["p_any"], alpha / 2)),
                p_any_wilson_low=float(wl),
                p_any_wilson_high=float(wh),
                median_kept=float(point[k]["median"][0]),
                p05_kept=float(point[k]["p05"][0]),
                p95_kept=float(point[k]["p95"][0]),
                mean_kept=float(point[k]["mean"][0]),
                gain_median=gains["median"][0],
                gain_median_low=gains["median"][1],
                gain_median_high=gains["median"][2],
                gain_mean=gains["mean"][0],
                gain_mean_low=gains["mean"][1],
                gain_mean_high=gains["mean"][2],
                oracle_median_kept=float(oracle_point[k]["median"][0]),
                oracle_mean_kept=float(oracle_point[k]["mean"][0]),
            )
        )
    return rows
