"""Is a declared cause of divergence more common where runs diverge than where they start?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from orchestrator.stats._checks import float_array


@dataclass(frozen=True)
class CauseAgainstBaseRate:
    """A cause's rate at the first divergence against its base rate at the first call, Fisher's exact test."""

    at_divergence: int
    divergences: int
    at_first_call: int
    first_calls: int
    rate_at_divergence: float
    base_rate: float
    #: sample odds ratio (a d) / (b c); inf or nan when a cell is empty
    odds_ratio: float
    #: two-sided Fisher exact p-value (as scipy.stats.fisher_exact and R's fisher.test)
    p_value: float
    dropped: int


def _present(values: ArrayLike, name: str) -> tuple[int, int, int]:
    arr = float_array(values, name)
    keep = ~np.isnan(arr)
    if not np.isin(arr[keep], (0.0, 1.0)).all():
        raise ValueError(f"{name} must hold 0/1 or booleans (NaN or None where the cause was not observable)")
    return int(arr[keep].sum()), int(keep.sum()), int((~keep).sum())


def fisher_exact_two_sided(a: int, b: int, c: int, d: int) -> float:
    """Could a 2x2 table this lopsided arise with the margins fixed and no association? Fisher's exact test.

    Two-sided p: the total hypergeometric probability of the tables (same margins) no more likely than
    the observed one, with a relative tolerance of 1e-7 for ties (the convention of R and scipy).
    """
    from scipy import stats

    if min(a, b, c, d) < 0:
        raise ValueError("table counts must be >= 0")
    row1, col1, total = a + b, a + c, a + b + c + d
    if total == 0 or row1 in (0, total) or col1 in (0, total):
        return 1.0
    lo, hi = max(0, row1 + col1 - total), min(row1, col1)
    support = np.arange(lo, hi + 1)
    pmf = stats.hypergeom.pmf(support, total, col1, row1)
    observed = stats.hypergeom.pmf(a, total, col1, row1)
    return float(min(1.0, pmf[pmf <= observed * (1 + 1e-7)].sum()))


def cause_against_base_rate(at_divergence: ArrayLike, at_first_call: ArrayLike) -> CauseAgainstBaseRate:
    """Is a declared cause more common at the first divergence than at the first call (its base rate)?

    `at_divergence`: per diverged pair, whether the cause was present at its first divergence.
    `at_first_call`: per pair, whether it was present at call 0 (the base-rate control: a cause that
    is as common at the start as where runs diverge explains nothing). NaN/None where the cause could
    not be observed; those are dropped and counted. Fisher's exact test on the 2x2 table
    [[present, absent] at divergence, [present, absent] at the first call]. The two rows share pairs,
    so read the p-value as a screen, not an exact error rate.
    """
    a, n_div, drop_a = _present(at_divergence, "at_divergence")
    c, n_first, drop_c = _present(at_first_call, "at_first_call")
    if n_div == 0 or n_first == 0:
        raise ValueError("need at least one observed divergence and one observed first call")
    b, d = n_div - a, n_first - c
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = float(np.float64(a * d) / np.float64(b * c))
    return CauseAgainstBaseRate(
        at_divergence=a,
        divergences=n_div,
        at_first_call=c,
        first_calls=n_first,
        rate_at_divergence=a / n_div,
        base_rate=c / n_first,
        odds_ratio=odds,
        p_value=fisher_exact_two_sided(a, b, c, d),
        dropped=drop_a + drop_c,
    )
