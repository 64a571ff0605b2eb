"""When do paired runs stop being identical? The first-divergence hazard by call index."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from orchestrator.stats._checks import check_confidence, float_array, int_array, same_length


@dataclass(frozen=True)
class HazardRow:
    """One call index: pairs identical before it (the risk set), and how many diverged at it."""

    index: int
    at_risk: int
    diverged: int
    hazard: float
    low: float
    high: float


@dataclass(frozen=True)
class DivergenceHazard:
    """The hazard rows shown, where they stop and why, and what was left out."""

    rows: tuple[HazardRow, ...]
    min_at_risk: int
    confidence: float
    #: the first call index not shown, because its risk set fell under `min_at_risk`
    stopped_at: int
    #: the risk set at `stopped_at` (0 when every pair had diverged or ended)
    at_risk_there: int
    pairs: int
    diverged: int
    never_diverged: int
    dropped: int


def divergence_hazard(
    first_divergence: ArrayLike,
    calls: ArrayLike,
    *,
    min_at_risk: int,
    confidence: float = 0.95,
) -> DivergenceHazard:
    """At each call index, what share of the pairs still identical up to it diverge there?

    Per pair: `first_divergence` is the index of its first differing call (NaN/None when the two runs
    never differed) and `calls` how many call indices the pair was compared at (for a pair that never
    diverged, it was identical at 0 .. calls-1 and is censored after that). The risk set at index k
    holds the pairs identical at 0 .. k-1 that were compared at k; the hazard is diverged / at risk,
    with a Clopper-Pearson interval. Rows stop at the first index whose risk set is under
    `min_at_risk` (a declared minimum: later rates rest on too few pairs). Pairs missing `calls` are
    dropped and counted. The risk sets equal Kaplan-Meier's (statsmodels SurvfuncRight) with event
    time = first divergence and censoring time = calls - 1.
    """
    from orchestrator.stats.binary import clopper_pearson_interval

    check_confidence(confidence)
    if isinstance(min_at_risk, bool) or not isinstance(min_at_risk, (int, np.integer)) or min_at_risk < 1:
        raise ValueError(f"min_at_risk must be an int >= 1, got {min_at_risk!r}")
    fd = float_array(first_divergence, "first_divergence")
    n_calls = float_array(calls, "calls")
    same_length(first_divergence=fd, calls=n_calls)
    keep = ~np.isnan(n_calls)
    fd, n_calls = fd[keep], n_calls[keep]
    int_array(n_calls, "calls", minimum=0)
    event = ~np.isnan(fd)
    int_array(fd[event], "first_divergence", minimum=0)
    if (fd[event] >= n_calls[event]).any():
        raise ValueError("a pair's first divergence must come before its number of compared calls")
    # last index at which each pair was at risk: its divergence, or its last identical call
    last = np.where(event, fd, n_calls - 1).astype(np.int64)
    horizon = int(last.max()) + 1 if last.size else 0
    rows: list[HazardRow] = []
    stopped_at, at_risk_there = horizon, 0  # the loop always stops: nobody is at risk at `horizon`
    for k in range(horizon + 1):
        at_risk = int(np.count_nonzero(last >= k))
        if at_risk < min_at_risk:
            stopped_at, at_risk_there = k, at_risk
            break
        diverged = int(np.count_nonzero(event & (fd == k)))
        low, high = clopper_pearson_interval(diverged, at_risk, confidence)
        rows.append(HazardRow(k, at_risk, diverged, diverged / at_risk, float(low), float(high)))
    return DivergenceHazard(
        rows=tuple(rows),
        min_at_risk=int(min_at_risk),
        confidence=confidence,
        stopped_at=stopped_at,
        at_risk_there=at_risk_there,
        pairs=int(fd.size),
        diverged=int(event.sum()),
        never_diverged=int((~event).sum()),
        dropped=int((~keep).sum()),
    )
