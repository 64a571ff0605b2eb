"""Does using more of the budget go with a better score, within one pairing?"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import Seed, check_resamples, float_array, rng_from, same_length
from orchestrator.stats.bootstrap import block_rows, row_blocks


@dataclass(frozen=True)
class RankCorrelation:
    rho: float
    p_value: float
    n: int
    dropped: int


def _ranks(x: NDArray[np.float64]) -> NDArray[np.float64]:
    from scipy import stats  # lazy: `import orchestrator.stats` must stay light

    return stats.rankdata(x, axis=-1)


def _pearson_rows(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    xc = x - x.mean(axis=-1, keepdims=True)
    yc = y - y.mean(axis=-1, keepdims=True)
    return (xc * yc).sum(axis=-1) / np.sqrt((xc * xc).sum(axis=-1) * (yc * yc).sum(axis=-1))


def rank_correlation(
    usage: ArrayLike, score: ArrayLike, *, n_resamples: int = 10_000, seed: Seed
) -> RankCorrelation:
    """Within one pairing, do runs that use more budget score higher (or lower)?

    Spearman's rho (average ranks for ties; equals scipy.stats.spearmanr) with a two-sided permutation
    p-value from shuffling scores against usage, p = (1 + hits) / (1 + n_resamples). Runs missing either
    value are dropped and counted.
    """
    u = float_array(usage, "usage")
    s = float_array(score, "score")
    same_length(usage=u, score=s)
    keep = ~(np.isnan(u) | np.isnan(s))
    u, s = u[keep], s[keep]
    if u.size < 3:
        raise ValueError(f"need at least 3 runs with both usage and score, got {u.size}")
    if np.ptp(u) == 0 or np.ptp(s) == 0:
        raise ValueError("rank correlation is undefined when usage or score is constant")
    n_resamples = check_resamples(n_resamples)
    ru, rs = _ranks(u), _ranks(s)
    rho = float(_pearson_rows(ru, rs))
    rng = rng_from(seed)
    hits = 0
    block = max(1, 2_000_000 // u.size)
    for start in range(0, n_resamples, block):
        size = min(n_resamples, start + block) - start
        shuffled = rng.permuted(np.broadcast_to(rs, (size, rs.size)), axis=1)
        null = _pearson_rows(ru[None, :], shuffled)
        hits += int(np.count_nonzero(np.abs(null) >= abs(rho) - 1e-12))
    return RankCorrelation(
        rho=rho, p_value=(hits + 1) / (n_resamples + 1), n=int(u.size), dropped=int((~keep).sum())
    )


@dataclass(frozen=True)
class PooledRankCorrelation:
    """Runs ranked within their own group (pairing), then correlated over all groups at once."""

    rho: float
    low: float
    high: float
    p_value: float
    n: int
    groups: int
    dropped: int


def _within_ranks(x: NDArray[np.float64], starts: NDArray[np.int64], sizes: NDArray[np.int64]) -> NDArray[np.float64]:
    """Ranks within each group as mid-rank percentiles (rank - 1/2) / size, for each row of x: every group
    then has the same mean (1/2), so pooling does not mix the groups' sizes into the correlation."""
    from scipy import stats

    out = np.empty_like(x)
    for s, n in zip(starts, sizes, strict=True):
        out[..., s : s + n] = (stats.rankdata(x[..., s : s + n], axis=-1) - 0.5) / n
    return out


def _group_streams(
    rng: np.random.Generator, sizes: NDArray[np.int64], n_resamples: int, rows: int,
    draw: Callable[[np.random.Generator, int, int], NDArray[np.int64]],
) -> Iterator[tuple[int, int, list[NDArray[np.int64]]]]:
    """The draws of one (n_resamples, n) matrix per group, made group after group from `rng`, yielded a
    block of rows of every group at a time: (start, stop, [rows start:stop of each group's matrix]).

    A first pass runs `rng` through the draws of every group but the last, keeping a copy of it where each
    group's draws begin; then the groups' streams are walked side by side. `draw(g, r, n)` must draw r rows
    of n as r consecutive single rows would (numpy's bounded integers and row-wise `permuted` do), so the
    rows equal those of one call per group, and `rng` ends where the whole matrices would have left it."""
    import copy

    blocks = row_blocks(n_resamples, rows)
    streams: list[np.random.Generator] = []
    for n in sizes[:-1]:
        streams.append(copy.deepcopy(rng))
        for start, stop in blocks:  # the same draws, not kept
            draw(rng, stop - start, int(n))
    streams.append(rng)
    for start, stop in blocks:
        yield start, stop, [draw(g, stop - start, int(n)) for g, n in zip(streams, sizes, strict=True)]


def pooled_rank_correlation(
    groups: ArrayLike,
    x: ArrayLike,
    y: ArrayLike,
    *,
    n_resamples: int = 2_000,
    seed: Seed,
    confidence: float = 0.95,
) -> PooledRankCorrelation:
    """Inside a pairing, do runs with more x have more y? Pooled over pairings, each ranked on its own.

    Each group's runs are ranked on x and on y (average ranks for ties), ranks turned into mid-rank
    percentiles (r - 1/2)/n so groups of different sizes share a scale, and Pearson's r of the pooled
    percentiles is the estimate (with equal group sizes it is Pearson's r of the pooled within-group ranks). The interval is a percentile bootstrap
    resampling runs within each group; the two-sided p-value permutes y within each group,
    p = (1 + hits) / (1 + n_resamples). Runs are put in a canonical order first, so nothing depends on the
    input's order. Runs missing x or y are dropped and counted; a group needs 3 runs.
    """
    from orchestrator.stats._checks import check_confidence, percentile_interval

    check_confidence(confidence)
    n_resamples = check_resamples(n_resamples)
    g = np.asarray(groups, dtype=object)
    xs, ys = float_array(x, "x"), float_array(y, "y")
    same_length(groups=g, x=xs, y=ys)
    keep = ~(np.isnan(xs) | np.isnan(ys))
    g, xs, ys = g[keep].astype(str), xs[keep], ys[keep]
    order = np.lexsort((ys, xs, g))
    g, xs, ys = g[order], xs[order], ys[order]
    labels, starts, sizes = np.unique(g, return_index=True, return_counts=True)
    big = sizes >= 3
    if not big.any():
        raise ValueError("need a group with at least 3 runs having both values")
    sel = np.concatenate([np.arange(s, s + n) for s, n in zip(starts[big], sizes[big], strict=True)])
    dropped = int((~keep).sum()) + int(g.size - sel.size)
    xs, ys = xs[sel], ys[sel]
    sizes = sizes[big]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    rx, ry = _within_ranks(xs, starts, sizes), _within_ranks(ys, starts, sizes)
    # a value tied within every group ranks every run at the middle (1/2): r would be 0/0 (numpy warned and
    # gave NaN, with a p-value from no hits); undefined, like rank_correlation's constant input
    for name, ranks in (("x", rx), ("y", ry)):
        if np.ptp(ranks) == 0:
            raise ValueError(f"pooled rank correlation is undefined when {name} is constant within every group")
    rho = float(_pearson_rows(rx, ry))
    rng = rng_from(seed)
    # resamples and permutations a block of rows at a time (issue 23: the whole n_resamples x runs matrices and
    # their rankings held 0.75 GiB at 8,000 runs); each group's rows come from where drawing its whole matrix
    # would have drawn them (`_group_streams`), and every row's arithmetic is the whole matrix's (blocks of
    # `block_rows`), so the figures do not depend on the block size
    rows = block_rows(int(sizes.sum()))
    boot = np.empty(n_resamples)

    def resample(g: np.random.Generator, r: int, n: int) -> NDArray[np.int64]:
        return g.integers(0, n, size=(r, n))

    def permute(g: np.random.Generator, r: int, n: int) -> NDArray[np.int64]:
        return g.permuted(np.tile(np.arange(n), (r, 1)), axis=1)

    for start, stop, parts in _group_streams(rng, sizes, n_resamples, rows, resample):
        idx = np.concatenate([s + part for s, part in zip(starts, parts, strict=True)], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample with all ties has no r: dropped below
            boot[start:stop] = _pearson_rows(_within_ranks(xs[idx], starts, sizes),
                                             _within_ranks(ys[idx], starts, sizes))
    lo, hi = percentile_interval(boot[~np.isnan(boot)], confidence)
    hits = 0
    for _, _, parts in _group_streams(rng, sizes, n_resamples, rows, permute):
        perm = np.concatenate([s + part for s, part in zip(starts, parts, strict=True)], axis=1)
        null = _pearson_rows(rx[None, :], ry[perm])
        hits += int(np.count_nonzero(np.abs(null) >= abs(rho) - 1e-12))
    return PooledRankCorrelation(
        rho=rho, low=lo, high=hi, p_value=(hits + 1) / (n_resamples + 1), n=int(xs.size),
        groups=int(sizes.size), dropped=dropped,
    )
