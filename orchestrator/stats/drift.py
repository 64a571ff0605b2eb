"""Did scores drift while an arm ran? The first half of its runs, in the order they ran, against the second."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from orchestrator.stats._checks import Seed, float_array, same_length
from orchestrator.stats.effects import MeanDifference, mean_difference


@dataclass(frozen=True)
class Halves:
    """Second half minus first half of an arm's runs, ordered by when they ran."""

    first_runs: int
    second_runs: int
    first_mean: float
    second_mean: float
    difference: MeanDifference
    dropped: int


def halves(order: ArrayLike, values: ArrayLike, *, n_resamples: int = 2_000, seed: Seed) -> Halves:
    """Did the arm's scores move between its first and its second half (by start time or run order)?

    Runs are sorted by `order` (ties by value, so the split does not depend on the input's order), the
    first floor(n/2) form the first half; the difference is second minus first with `mean_difference`'s
    SE, z, p and bootstrap interval. Runs missing either value are dropped and counted.
    """
    o, v = float_array(order, "order"), float_array(values, "values")
    same_length(order=o, values=v)
    keep = ~(np.isnan(o) | np.isnan(v))
    o, v = o[keep], v[keep]
    if v.size < 4:
        raise ValueError(f"need at least 4 runs with an order and a value, got {v.size}")
    idx = np.lexsort((v, o))
    h = v.size // 2
    first, second = v[idx[:h]], v[idx[h:]]
    d = mean_difference(second, first, n_resamples=n_resamples, seed=seed)
    return Halves(first_runs=int(first.size), second_runs=int(second.size), first_mean=float(first.mean()),
                  second_mean=float(second.mean()), difference=d, dropped=int((~keep).sum()))
