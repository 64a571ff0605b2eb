import numpy as np
import pytest

from orchestrator.stats import score_per_repeat, variance_components


def test_score_per_repeat_orders_numerically_and_drops_missing() -> None:
    out = score_per_repeat([1, 1, 2, 2, 10, 10], [1.0, 0.0, 1.0, 1.0, 0.0, np.nan])
    assert list(out.repeats) == ["1", "2", "10"]
    assert out.scores.tolist() == [0.5, 1.0, 0.0]
    assert out.dropped == 1 and out.low == 0.0 and out.high == 1.0
    assert out.sd == pytest.approx(np.std([0.5, 1.0, 0.0], ddof=1))


def test_variance_components_match_balanced_anova() -> None:
    rng = np.random.default_rng(0)
    t, r = 40, 6
    y = rng.normal(0, 2, size=t)[:, None] + rng.normal(0, 1, size=(t, r))
    tasks = np.repeat(np.arange(t), r)
    out = variance_components(tasks, y.ravel())
    group_means = y.mean(axis=1)
    msw = ((y - group_means[:, None]) ** 2).sum() / (t * (r - 1))
    msb = r * ((group_means - y.mean()) ** 2).sum() / (t - 1)
    assert out.within == pytest.approx(msw)
    assert out.between == pytest.approx((msb - msw) / r)
    assert out.tasks == t and out.runs_per_task == r


def test_variance_components_recover_known_parts() -> None:
    rng = np.random.default_rng(1)
    t, r = 400, 8
    y = rng.normal(0, 0.3, size=t)[:, None] + rng.normal(0, 0.2, size=(t, r))
    out = variance_components(np.repeat(np.arange(t), r), y.ravel())
    assert out.between == pytest.approx(0.09, rel=0.25)  # SE about 0.007 at 400 tasks
    assert out.within == pytest.approx(0.04, rel=0.05)
    assert 0 < out.between_share < 1


def test_variance_components_need_two_tasks_and_replicates() -> None:
    with pytest.raises(ValueError, match="2 tasks"):
        variance_components(["a", "a"], [1.0, 0.0])
    with pytest.raises(ValueError, match="2 or more runs"):
        variance_components(["a", "b"], [1.0, 0.0])
