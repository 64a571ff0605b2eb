import math

import numpy as np
import pytest
from scipy import stats as sps

from orchestrator.stats import cause_against_base_rate, fisher_exact_two_sided


def _brute_force_fisher(a: int, b: int, c: int, d: int) -> float:
    row1, col1, n = a + b, a + c, a + b + c + d

    def prob(x: int) -> float:
        return math.comb(col1, x) * math.comb(n - col1, row1 - x) / math.comb(n, row1)

    observed = prob(a)
    xs = range(max(0, row1 + col1 - n), min(row1, col1) + 1)
    return min(1.0, sum(prob(x) for x in xs if prob(x) <= observed * (1 + 1e-7)))


@pytest.mark.parametrize(
    "table", [(3, 1, 1, 3), (12, 5, 2, 40), (0, 9, 4, 6), (7, 7, 7, 7), (30, 14, 5, 195), (1, 0, 0, 1)]
)
def test_fisher_matches_scipy_and_brute_force(table: tuple[int, int, int, int]) -> None:
    a, b, c, d = table
    p = fisher_exact_two_sided(a, b, c, d)
    assert p == pytest.approx(sps.fisher_exact([[a, b], [c, d]]).pvalue, rel=1e-9)
    assert p == pytest.approx(_brute_force_fisher(a, b, c, d), rel=1e-9)


def test_cause_rate_at_divergence_against_its_base_rate() -> None:
    # a provider fingerprint differs at 30 of 44 first divergences, but already at 120 of 200 first calls
    at_div = np.r_[np.ones(30), np.zeros(14), np.full(3, np.nan)]
    at_first = np.r_[np.ones(120), np.zeros(80)]
    out = cause_against_base_rate(at_div, at_first)
    assert (out.at_divergence, out.divergences, out.at_first_call, out.first_calls) == (30, 44, 120, 200)
    assert out.rate_at_divergence == pytest.approx(30 / 44) and out.base_rate == pytest.approx(0.6)
    assert out.dropped == 3
    ref = sps.fisher_exact([[30, 14], [120, 80]])
    assert out.p_value == pytest.approx(ref.pvalue) and out.odds_ratio == pytest.approx(ref.statistic)
    assert out.p_value > 0.3  # as common at the start as where runs diverge: no evidence it causes anything


def test_cause_far_above_its_base_rate_is_significant() -> None:
    out = cause_against_base_rate([1] * 20 + [0] * 4, [1] * 5 + [0] * 95)
    assert out.p_value < 1e-10
    with pytest.raises(ValueError, match="at least one observed divergence"):
        cause_against_base_rate([np.nan], [1])
