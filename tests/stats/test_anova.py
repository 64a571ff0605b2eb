import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm

from orchestrator.stats import group_share


def _data(effect: float, seed: int = 0, groups: int = 6, per_group: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.repeat([f"g{i}" for i in range(groups)], per_group)
    values = np.repeat(rng.normal(0, effect, groups), per_group) + rng.normal(0, 1, groups * per_group)
    return labels, values


def test_f_and_share_match_scipy_and_statsmodels() -> None:
    labels, values = _data(effect=0.8)
    out = group_share(labels, values, n_resamples=2000, seed=1)
    ref = sps.f_oneway(*[values[labels == g] for g in np.unique(labels)])
    assert out.f == pytest.approx(ref.statistic) and out.f_p_value == pytest.approx(ref.pvalue)
    table = anova_lm(ols("y ~ C(g)", data=pd.DataFrame({"y": values, "g": labels})).fit())
    ss_b, ss_w = table["sum_sq"].iloc[0], table["sum_sq"].iloc[1]
    assert out.share == pytest.approx(ss_b / (ss_b + ss_w))
    assert (out.df_between, out.df_within) == (5, 42)


def test_permutation_p_matches_scipy_permutation_test() -> None:
    labels, values = _data(effect=0.35, seed=2)
    out = group_share(labels, values, n_resamples=20_000, seed=3)
    samples = [values[labels == g] for g in np.unique(labels)]
    ref = sps.permutation_test(
        samples,
        lambda *s, axis=-1: sps.f_oneway(*s, axis=axis).statistic,
        permutation_type="independent",
        vectorized=True,
        alternative="greater",
        n_resamples=20_000,
        random_state=np.random.default_rng(4),
    )
    assert 0.01 < ref.pvalue < 0.9  # a case where the p-value is neither tiny nor trivial
    assert out.p_value == pytest.approx(ref.pvalue, abs=0.01)


def test_permutation_p_matches_exact_enumeration() -> None:
    labels = np.array(["a", "a", "b", "b", "c", "c", "c"])
    values = np.array([1.0, 2.0, 2.5, 4.0, 3.0, 5.0, 6.0])
    out = group_share(labels, values, n_resamples=40_000, seed=5)

    def share(lab: np.ndarray) -> float:
        grand = values.mean()
        return (
            sum(((values[lab == g].mean() - grand) ** 2) * (lab == g).sum() for g in "abc")
            / ((values - grand) ** 2).sum()
        )

    observed = share(labels)
    null = [share(labels[list(p)]) for p in itertools.permutations(range(7))]
    exact = np.mean(np.array(null) >= observed - 1e-12)
    assert out.share == pytest.approx(observed)
    assert out.p_value == pytest.approx(exact, abs=0.01)
    assert out.null_mean_share == pytest.approx(np.mean(null), abs=0.01)


def test_null_mean_is_not_zero_and_a_low_threshold_is_flagged() -> None:
    # 50 tasks x 4 pairs with no task effect at all: random grouping puts about 49/199 between tasks
    rng = np.random.default_rng(6)
    labels = np.repeat([f"t{i}" for i in range(50)], 4)
    values = rng.integers(0, 12, size=200).astype(float)
    out = group_share(labels, values, n_resamples=5000, seed=7, threshold=0.20)
    assert out.null_mean_share == pytest.approx(49 / 199, abs=0.005)
    assert out.warning is not None and "0.200" in out.warning
    assert out.p_value > 0.05
    assert group_share(labels, values, n_resamples=500, seed=7, threshold=0.5).warning is None


def test_strong_groups_are_detected_and_missing_values_dropped() -> None:
    labels, values = _data(effect=3.0, seed=8)
    values[0] = np.nan
    labels = labels.astype(object)
    labels[1] = None
    out = group_share(labels, values, n_resamples=2000, seed=9)
    assert out.p_value < 0.001 and out.share > 0.5 and out.dropped == 2 and out.n == 46
    with pytest.raises(ValueError, match="at least 2 groups"):
        group_share(["a", "a"], [1.0, 2.0], n_resamples=10, seed=0)
    with pytest.raises(ValueError, match="every value is the same"):
        group_share(["a", "a", "b"], [1.0, 1.0, 1.0], n_resamples=10, seed=0)
