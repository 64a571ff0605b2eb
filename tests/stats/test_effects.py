"""A factor's effect (difference of two arms' means) against statsmodels, and order-free."""

import numpy as np
import pytest

from orchestrator.stats import mean_difference


def test_mean_difference_matches_statsmodels() -> None:
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    rng = np.random.default_rng(1)
    a, b = rng.normal(0.747, 0.011, 144), rng.normal(0.738, 0.010, 150)
    a[5] = np.nan
    out = mean_difference(a, b, n_resamples=4_000, seed=0)
    cm = CompareMeans(DescrStatsW(a[~np.isnan(a)]), DescrStatsW(b))
    z, p = cm.ztest_ind(usevar="unequal")
    assert out.estimate == pytest.approx(np.nanmean(a) - b.mean()) and out.dropped == 1
    assert out.se == pytest.approx(cm.std_meandiff_separatevar) and out.z == pytest.approx(z)
    assert out.p_value == pytest.approx(p)
    # the percentile interval of 4,000 resamples lies near the normal one (+-1.96 SE)
    assert out.low == pytest.approx(out.estimate - 1.96 * out.se, abs=0.25 * out.se)
    assert out.high == pytest.approx(out.estimate + 1.96 * out.se, abs=0.25 * out.se)


def test_mean_difference_does_not_depend_on_run_order() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=30), rng.normal(size=25)
    assert mean_difference(a, b, n_resamples=500, seed=3) == mean_difference(a[::-1], rng.permutation(b),
                                                                            n_resamples=500, seed=3)
    with pytest.raises(ValueError, match="at least 2 scored runs"):
        mean_difference([1.0], b, seed=0)
