"""Does using more of the budget go with a better score, within one pairing?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import Seed, check_resamples, float_array, rng_from, same_length


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
