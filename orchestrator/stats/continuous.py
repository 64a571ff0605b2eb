"""Continuous outcomes (such as a holdout AUC): pairing summaries, spread against noise, wrong orderings."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import Seed, check_confidence, check_resamples, float_array, rng_from
from orchestrator.stats.bootstrap import bootstrap_mean

#: the exact wrong-order probability enumerates sums of r draws while support x n stays below this
EXACT_CELL_LIMIT = 6_000_000


@dataclass(frozen=True)
class RunSummary:
    """One pairing's scored runs, summarised."""

    n: int
    dropped: int
    mean: float
    median: float
    sd: float
    low: float
    high: float
    best: float


def summarize_runs(
    values: ArrayLike, *, n_resamples: int = 10_000, seed: Seed, confidence: float = 0.95,
    higher_is_better: bool = True,
) -> RunSummary:
    """What did this pairing score: centre, spread, best, and how well is its mean known?

    Mean, median, SD (ddof=1), best (the maximum; the minimum for a lower-is-better metric), and a percentile bootstrap interval of the mean over
    runs. Missing scores are dropped and counted, never scored 0.
    """
    vals = float_array(values, "values")
    keep = ~np.isnan(vals)
    data = vals[keep]
    if data.size == 0:
        raise ValueError("no scored run to summarise")
    check_confidence(confidence)
    if data.size >= 2:
        boot = bootstrap_mean(data, n_resamples=n_resamples, seed=seed, confidence=confidence)
        low, high, sd = boot.low, boot.high, float(data.std(ddof=1))
    else:
        low = high = sd = float("nan")
    return RunSummary(
        n=int(data.size),
        dropped=int((~keep).sum()),
        mean=float(data.mean()),
        median=float(np.median(data)),
        sd=sd,
        low=low,
        high=high,
        best=float(data.max() if higher_is_better else data.min()),
    )


@dataclass(frozen=True)
class SpreadVsNoise:
    """How far apart pairings are, measured in run-to-run noise."""

    pairings: int
    range_of_means: float
    sd_of_means: float
    median_run_sd: float

    @property
    def ratio(self) -> float:
        """Range of pairing means divided by the median run-to-run SD."""
        return self.range_of_means / self.median_run_sd if self.median_run_sd > 0 else math.inf


def spread_against_noise(groups: Sequence[ArrayLike]) -> SpreadVsNoise:
    """Are the pairings further apart than one pairing's runs are from each other?

    Compares the range and SD of pairing means with the median of the pairings' run-to-run SDs.
    Missing scores are dropped; a pairing needs two scored runs to have an SD.
    """
    if len(groups) < 2:
        raise ValueError(f"need at least 2 pairings, got {len(groups)}")
    means, sds = [], []
    for i, g in enumerate(groups):
        v = float_array(g, f"groups[{i}]")
        v = v[~np.isnan(v)]
        if v.size < 2:
            raise ValueError(f"groups[{i}] needs at least 2 scored runs, got {v.size}")
        means.append(v.mean())
        sds.append(v.std(ddof=1))
    m = np.array(means)
    return SpreadVsNoise(
        pairings=len(groups),
        range_of_means=float(m.max() - m.min()),
        sd_of_means=float(m.std(ddof=1)),
        median_run_sd=float(np.median(sds)),
    )


@dataclass(frozen=True)
class WrongOrder:
    """How often r-run averages rank the weaker pairing first."""

    r: int
    p_wrong: float
    p_tie: float
    exact: bool


def _sum_distribution(values: NDArray[np.float64], r: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Exact distribution of the sum of r draws with replacement: (support, probabilities)."""
    base_support, base_counts = np.unique(np.round(values, 12), return_counts=True)
    base_p = base_counts / values.size
    support, prob = base_support, base_p
    for _ in range(r - 1):
        s = np.round((support[:, None] + base_support[None, :]).ravel(), 12)
        p = (prob[:, None] * base_p[None, :]).ravel()
        support, inverse = np.unique(s, return_inverse=True)
        # float64 already (weighted); the cast without a copy tells numpy's stubs, which know only counts
        prob = np.bincount(inverse.ravel(), weights=p, minlength=support.size).astype(np.float64, copy=False)
    return support, prob


def _exact_feasible(n_distinct: int, r: int) -> bool:
    # the support after j steps has at most C(n + j - 1, j) points; the last step multiplies it by n
    return math.comb(n_distinct + r - 2, r - 1) * n_distinct <= EXACT_CELL_LIMIT


def wrong_order_probability(
    weaker: ArrayLike,
    stronger: ArrayLike,
    r: int,
    *,
    n_sims: int = 200_000,
    seed: Seed,
) -> WrongOrder:
    """If each pairing were run r times and the averages compared, how often would the weaker one win?

    Draws r runs with replacement from each pairing's observed runs. Exact over all draws (by convolving
    the empirical distributions) where the number of distinct sums is small enough, otherwise simulated
    with `n_sims` draws. p_wrong counts strict wins of `weaker`; ties are reported apart.
    """
    a = float_array(weaker, "weaker")
    b = float_array(stronger, "stronger")
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if a.size == 0 or b.size == 0:
        raise ValueError("both pairings need at least one scored run")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
        raise ValueError(f"r must be an int >= 1, got {r!r}")
    r = int(r)
    na, nb = np.unique(a).size, np.unique(b).size
    if _exact_feasible(na, r) and _exact_feasible(nb, r):
        sa, pa = _sum_distribution(a, r)
        sb, pb = _sum_distribution(b, r)
        cdf_b = np.concatenate([[0.0], np.cumsum(pb)])
        below = cdf_b[np.searchsorted(sb, sa, side="left")]  # P(S_b < s_a)
        upto = cdf_b[np.searchsorted(sb, sa, side="right")]  # P(S_b <= s_a)
        p_wrong = float(pa @ below)
        p_tie = float(pa @ (upto - below))
        return WrongOrder(r=r, p_wrong=min(1.0, p_wrong), p_tie=min(1.0, p_tie), exact=True)
    n_sims = check_resamples(n_sims)
    rng = rng_from(seed)
    wins = ties = 0
    block = max(1, 4_000_000 // r)
    for start in range(0, n_sims, block):
        size = min(n_sims, start + block) - start
        sa = np.round(a[rng.integers(0, a.size, size=(size, r))].sum(axis=1), 12)
        sb = np.round(b[rng.integers(0, b.size, size=(size, r))].sum(axis=1), 12)
        wins += int(np.count_nonzero(sa > sb))
        ties += int(np.count_nonzero(sa == sb))
    return WrongOrder(r=r, p_wrong=wins / n_sims, p_tie=ties / n_sims, exact=False)


@dataclass(frozen=True)
class RunGaps:
    """How far apart two runs of one pairing land: |x_i - x_j| over every pair of distinct runs."""

    pairs: int
    mean: float
    median: float
    p90: float
    dropped: int


def run_gaps(groups: ArrayLike, values: ArrayLike) -> RunGaps:
    """If I run the same pairing twice, how far apart are the two scores?

    Every unordered pair of distinct runs within a group (pairing) gives one gap |x_i - x_j|; the gaps of
    all groups are pooled (with equal run counts every pairing weighs the same), and their mean, median
    and 90th percentile (numpy's linear rule) are returned. Missing values are dropped and counted.
    """
    g = np.asarray(groups, dtype=object)
    v = float_array(values, "values")
    if g.shape != v.shape:
        raise ValueError(f"groups and values must have the same length, got {g.shape} and {v.shape}")
    keep = ~np.isnan(v)
    sorted_groups = [x for x in (np.sort(v[keep & (g.astype(str) == label)]) for label in sorted({str(x) for x in g[keep]}))
                     if x.size >= 2]
    if not sorted_groups:
        raise ValueError("need a group with at least 2 scored runs")
    pairs = sum(x.size * (x.size - 1) // 2 for x in sorted_groups)
    if pairs > _DENSE_PAIRS:  # 20,000 runs a pairing are 2e8 pairs (1.6 GB of gaps): never held
        return RunGaps(pairs=pairs, mean=_gap_mean(sorted_groups, pairs), median=_gap_quantile(sorted_groups, pairs, 0.5),
                       p90=_gap_quantile(sorted_groups, pairs, 0.9), dropped=int((~keep).sum()))
    gaps = []
    for x in sorted_groups:
        i, j = np.triu_indices(x.size, 1)
        gaps.append(np.abs(x[i] - x[j]))
    d = np.concatenate(gaps)
    return RunGaps(pairs=int(d.size), mean=float(d.mean()), median=float(np.median(d)),
                   p90=float(np.quantile(d, 0.9)), dropped=int((~keep).sum()))


#: up to this many pairs the gaps are held and numpy's mean, median and quantile taken of them; past it the
#: order statistics are found by counting (the same figures) and the mean by a sum over runs (the same up to
#: rounding), in memory linear in the runs
_DENSE_PAIRS = 4_000_000


def _gap_mean(groups: Sequence[NDArray[np.float64]], pairs: int) -> float:
    # over the pairs i < j of sorted x, sum (x_j - x_i) = sum_j x_j (2j - n + 1)
    total = sum(float(np.dot(x, 2.0 * np.arange(x.size) - x.size + 1)) for x in groups)
    return total / pairs


def _gaps_at_most(groups: Sequence[NDArray[np.float64]], t: float) -> int:
    """How many pairs i < j of a group have x_j - x_i <= t (computed as numpy subtracts, x sorted)?"""
    count = 0
    for x in groups:
        i = np.arange(x.size)
        # the last j with x_j - x_i <= t: near searchsorted(x, x_i + t); fixed up where rounding disagrees,
        # a tie run at a time, so the count is exact for the subtraction the dense path does
        end = np.searchsorted(x, x + t, side="right")
        for _ in range(64):
            ahead = end < x.size
            up = ahead & (x[np.minimum(end, x.size - 1)] - x <= t)
            down = (end > i + 1) & (x[np.maximum(end - 1, 0)] - x > t)
            if not (up.any() or down.any()):
                break
            end = np.where(up, np.searchsorted(x, x[np.minimum(end, x.size - 1)], side="right"), end)
            end = np.where(down, np.searchsorted(x, x[np.maximum(end - 1, 0)], side="left"), end)
        count += int(np.maximum(end - i - 1, 0).sum())
    return count


def _gap_order_statistic(groups: Sequence[NDArray[np.float64]], rank: int) -> float:
    """The gap at 0-based `rank` in ascending order: the least t with more than `rank` gaps <= t, found by
    bisection over the float64s between 0 and the largest gap (their bit patterns are ordered as ints)."""
    lo = 0
    hi = int(np.float64(max(float(x[-1] - x[0]) for x in groups)).view(np.int64))
    while lo < hi:
        mid = (lo + hi) // 2
        if _gaps_at_most(groups, float(np.int64(mid).view(np.float64))) > rank:
            hi = mid
        else:
            lo = mid + 1
    return float(np.int64(lo).view(np.float64))


def _gap_quantile(groups: Sequence[NDArray[np.float64]], pairs: int, q: float) -> float:
    """numpy's quantile (linear rule; the median's mean of the two middle gaps) of all gaps, from two order
    statistics."""
    if q == 0.5:
        if pairs % 2:
            return _gap_order_statistic(groups, pairs // 2)
        middle = np.array([_gap_order_statistic(groups, pairs // 2 - 1), _gap_order_statistic(groups, pairs // 2)])
        return float(np.mean(middle))
    virtual = (pairs - 1) * q
    below = math.floor(virtual)
    a = _gap_order_statistic(groups, below)
    b = _gap_order_statistic(groups, min(below + 1, pairs - 1))
    # numpy's _lerp: from the nearer end
    gamma = np.float64(virtual - below)
    diff = np.float64(b) - np.float64(a)
    return float(b - diff * (1 - gamma)) if gamma >= 0.5 else float(a + diff * gamma)
