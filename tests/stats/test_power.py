import math

import numpy as np
import pytest

from orchestrator.stats import miller_task_count, runs_per_arm, simulated_paired_power, variance_components


def test_published_runs_per_arm() -> None:
    assert runs_per_arm(0.0104, 0.0091) == pytest.approx(20.9, abs=0.05)
    assert math.ceil(runs_per_arm(0.0104, 0.0091)) == 21
    assert math.isinf(runs_per_arm(0.01, 0.0))
    with pytest.raises(ValueError):
        runs_per_arm(-1.0, 0.1)


def test_miller_task_count_formula() -> None:
    n = miller_task_count(0.05, 0.02, 0.2, 0.2, 4)
    assert n == pytest.approx((1.96 + 0.84) ** 2 * (0.02 + 0.05 + 0.05) / 0.0025)
    with pytest.raises(ValueError, match="difference"):
        miller_task_count(0.0, 0.1, 0.1, 0.1, 1)


def test_simulated_power_hits_eighty_percent_at_millers_count() -> None:
    rng = np.random.default_rng(0)
    p_b = rng.uniform(0.3, 0.7, size=500)
    p_a = np.clip(p_b + 0.08 + rng.normal(0, 0.05, size=500), 0, 1)
    runs = 3
    d = float((p_a - p_b).mean())
    w2 = float((p_a - p_b).var())
    s_a = float((p_a * (1 - p_a)).mean())
    s_b = float((p_b * (1 - p_b)).mean())
    n = math.ceil(miller_task_count(d, w2, s_a, s_b, runs))
    sim = simulated_paired_power(p_a, p_b, tasks=n, runs=runs, n_sims=4000, seed=1)
    assert sim.power == pytest.approx(0.80, abs=0.04)
    assert simulated_paired_power(p_a, p_b, tasks=4 * n, runs=runs, n_sims=1000, seed=2).power > 0.97


def test_simulated_power_is_alpha_under_the_null() -> None:
    p = np.random.default_rng(2).uniform(0.2, 0.8, size=200)
    sim = simulated_paired_power(p, p, tasks=60, runs=2, n_sims=4000, seed=0)
    assert sim.power == pytest.approx(0.05, abs=0.015)


def test_variance_components_feed_miller() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(0.1, 0.9, size=200)
    y = (rng.random((200, 5)) < p[:, None]).astype(float)
    split = variance_components(np.repeat(np.arange(200), 5), y.ravel())
    assert split.within == pytest.approx(float((p * (1 - p)).mean()), rel=0.1)
    assert split.between == pytest.approx(float(p.var()), rel=0.2)
