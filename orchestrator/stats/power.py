"""How many runs or tasks a comparison needs: rules of thumb, Miller's task count, simulated power."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from orchestrator.stats._checks import Seed, check_resamples, float_array, rng_from, same_length

Z_ALPHA = 1.96  # two-sided 5%
Z_BETA = 0.84  # 80% power


def runs_per_arm(sd: float, gap: float, *, multiplier: float = 16.0) -> float:
    """How many runs per pairing does it take to see a gap of this size with 80% power at 5%?

    Lehr's rule n = 16 sd^2 / gap^2 (16 ~ 2 (1.96 + 0.84)^2), for a two-sample comparison of means with
    the run-to-run SD `sd`. Round up for a plan. A zero gap needs infinitely many runs.
    """
    if not (math.isfinite(sd) and sd >= 0):
        raise ValueError(f"sd must be finite and >= 0, got {sd}")
    if not math.isfinite(gap):
        raise ValueError(f"gap must be finite, got {gap}")
    if multiplier <= 0:
        raise ValueError(f"multiplier must be > 0, got {multiplier}")
    if gap == 0:
        return math.inf
    return multiplier * sd * sd / (gap * gap)


def miller_task_count(
    difference: float,
    between_variance: float,
    within_variance_a: float,
    within_variance_b: float,
    runs_per_task: int,
    *,
    z_alpha: float = Z_ALPHA,
    z_beta: float = Z_BETA,
) -> float:
    """How many tasks does a paired eval need to detect this difference with the usual power?

    Miller (2024), "Adding Error Bars to Evals", eq. for paired designs:
    n = (z_a + z_b)^2 (w^2 + sA^2/K + sB^2/K) / d^2, where w^2 is the variance across tasks of the
    true per-task difference, sA^2 and sB^2 the mean within-task run variances, K runs per task.
    """
    if difference == 0 or not math.isfinite(difference):
        raise ValueError(f"difference must be finite and nonzero, got {difference}")
    for name, v in (
        ("between_variance", between_variance),
        ("within_variance_a", within_variance_a),
        ("within_variance_b", within_variance_b),
    ):
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be finite and >= 0, got {v}")
    if isinstance(runs_per_task, bool) or runs_per_task < 1:
        raise ValueError(f"runs_per_task must be >= 1, got {runs_per_task}")
    k = float(runs_per_task)
    return (
        (z_alpha + z_beta) ** 2
        * (between_variance + within_variance_a / k + within_variance_b / k)
        / (difference * difference)
    )


@dataclass(frozen=True)
class SimulatedPower:
    power: float
    se: float
    tasks: int
    runs: int
    n_sims: int


def simulated_paired_power(
    p_a: ArrayLike,
    p_b: ArrayLike,
    *,
    tasks: int,
    runs: int,
    n_sims: int = 2_000,
    alpha: float = 0.05,
    seed: Seed,
) -> SimulatedPower:
    """With T tasks and R runs each, how often would a paired test find the difference between A and B?

    Each simulation draws `tasks` tasks with replacement from the given per-task pass probabilities,
    `runs` pass/fail runs per version per task, and tests the mean per-task difference with the
    clustered z test (mean / (sd / sqrt(T)), two-sided at `alpha`). Power is the rejection share.
    """
    pa = float_array(p_a, "p_a")
    pb = float_array(p_b, "p_b")
    same_length(p_a=pa, p_b=pb)
    if pa.size == 0 or np.isnan(pa).any() or np.isnan(pb).any():
        raise ValueError("need per-task probabilities with no missing value")
    if ((pa < 0) | (pa > 1) | (pb < 0) | (pb > 1)).any():
        raise ValueError("probabilities must lie in [0, 1]")
    if tasks < 2 or runs < 1:
        raise ValueError(f"need tasks >= 2 and runs >= 1, got tasks={tasks} runs={runs}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    n_sims = check_resamples(n_sims)
    rng = rng_from(seed)
    from scipy import stats  # lazy: `import orchestrator.stats` must stay light

    crit = float(stats.norm.ppf(1 - alpha / 2))
    rejections = 0
    block = max(1, 1_000_000 // tasks)
    for start in range(0, n_sims, block):
        size = min(n_sims, start + block) - start
        pick = rng.integers(0, pa.size, size=(size, tasks))
        diff = (rng.binomial(runs, pa[pick]) - rng.binomial(runs, pb[pick])) / runs
        mean = diff.mean(axis=1)
        sd = diff.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(sd > 0, mean / (sd / math.sqrt(tasks)), np.where(mean != 0, np.inf, 0.0))
        rejections += int(np.count_nonzero(np.abs(z) > crit))
    power = rejections / n_sims
    return SimulatedPower(
        power=power,
        se=math.sqrt(power * (1 - power) / n_sims),
        tasks=int(tasks),
        runs=int(runs),
        n_sims=n_sims,
    )
