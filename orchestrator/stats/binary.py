"""Pass/fail outcomes: pass@k and pass^k, binomial intervals, exact McNemar, Cohen's kappa, cost per solve."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from orchestrator.stats._checks import bool_array, check_confidence, float_array, int_array, same_length


def _counts(n: ArrayLike, c: ArrayLike, k: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    n_arr = int_array(n, "n", minimum=0)
    c_arr = int_array(c, "c", minimum=0)
    if n_arr.shape != c_arr.shape:
        if n_arr.size == 1:
            n_arr = np.full(c_arr.shape, n_arr[0])
        elif c_arr.size == 1:
            c_arr = np.full(n_arr.shape, c_arr[0])
        else:
            raise ValueError(f"n and c must have the same length, got {n_arr.size} and {c_arr.size}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if (c_arr > n_arr).any():
        raise ValueError("every task needs c <= n (successes cannot exceed runs)")
    return n_arr, c_arr


def _log_comb(a: NDArray[np.float64], b: float) -> NDArray[np.float64]:
    from scipy import special  # lazy: `import orchestrator.stats` must stay light

    return special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(a - b + 1)


def _scalar_if(scalar: bool, arr: NDArray[np.float64]) -> NDArray[np.float64] | float:
    return float(arr[0]) if scalar else arr


def _is_scalar(*values: ArrayLike) -> bool:
    return all(np.ndim(v) == 0 for v in values)


def pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> NDArray[np.float64] | float:
    """If we draw k of a task's n runs without replacement, how likely is at least one pass?

    Unbiased estimator of Chen et al. (2021): 1 - C(n-c, k) / C(n, k), one value per task.
    Tasks with fewer than k runs cannot be estimated and come back as NaN (see `mean_pass_at_k`).
    Scalar n and c give a float.
    """
    n_arr, c_arr = _counts(n, c, k)
    out = np.full(n_arr.shape, np.nan)
    ok = n_arr >= k
    fails = (n_arr - c_arr).astype(np.float64)
    all_hit = ok & (fails < k)
    out[all_hit] = 1.0
    rest = ok & ~all_hit
    if rest.any():
        log_ratio = _log_comb(fails[rest], k) - _log_comb(n_arr[rest].astype(np.float64), k)
        out[rest] = 1.0 - np.exp(log_ratio)
    return _scalar_if(_is_scalar(n, c), out)


def pass_hat_k(n: ArrayLike, c: ArrayLike, k: int) -> NDArray[np.float64] | float:
    """If we draw k of a task's n runs without replacement, how likely is it that all k pass?

    pass^k (Yao et al., 2024, tau-bench): C(c, k) / C(n, k), one value per task; NaN where n < k.
    """
    n_arr, c_arr = _counts(n, c, k)
    out = np.full(n_arr.shape, np.nan)
    ok = n_arr >= k
    out[ok & (c_arr < k)] = 0.0
    rest = ok & (c_arr >= k)
    if rest.any():
        log_ratio = _log_comb(c_arr[rest].astype(np.float64), k) - _log_comb(
            n_arr[rest].astype(np.float64), k
        )
        out[rest] = np.exp(log_ratio)
    return _scalar_if(_is_scalar(n, c), out)


@dataclass(frozen=True)
class TaskAverage:
    """A per-task estimate averaged over tasks; tasks that could not be estimated are counted, not scored."""

    value: float
    tasks: int
    dropped: int


def _task_average(per_task: NDArray[np.float64]) -> TaskAverage:
    ok = ~np.isnan(per_task)
    value = float(per_task[ok].mean()) if ok.any() else float("nan")
    return TaskAverage(value=value, tasks=int(ok.sum()), dropped=int((~ok).sum()))


def mean_pass_at_k(n: ArrayLike, c: ArrayLike, k: int) -> TaskAverage:
    """Averaged over tasks, how likely is at least one pass in k attempts? Tasks with n < k are dropped."""
    return _task_average(np.atleast_1d(pass_at_k(n, c, k)))


def mean_pass_hat_k(n: ArrayLike, c: ArrayLike, k: int) -> TaskAverage:
    """Averaged over tasks, how likely is it that all of k attempts pass? Tasks with n < k are dropped."""
    return _task_average(np.atleast_1d(pass_hat_k(n, c, k)))


def pass_curves(n: ArrayLike, c: ArrayLike, ks: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """How do pass@k and pass^k (averaged over tasks) change as k grows? Returns two arrays over `ks`."""
    k_arr = int_array(ks, "ks", minimum=1)
    at = np.array([mean_pass_at_k(n, c, int(k)).value for k in k_arr])
    hat = np.array([mean_pass_hat_k(n, c, int(k)).value for k in k_arr])
    return at, hat


def _z(confidence: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(0.5 + check_confidence(confidence) / 2))


def _binomial_inputs(successes: ArrayLike, n: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = int_array(successes, "successes").astype(np.float64)
    m = int_array(n, "n").astype(np.float64)
    if x.shape != m.shape:
        x, m = np.broadcast_arrays(x, m)
    if (m < 1).any():
        raise ValueError("n must be >= 1 for a binomial interval")
    if (x > m).any():
        raise ValueError("successes cannot exceed n")
    return x, m


def wilson_interval(
    successes: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[NDArray | float, NDArray | float]:
    """Which success rates are consistent with x passes in n runs? Wilson score interval (Wilson, 1927).

    Vectorised over (successes, n). Returns (low, high): arrays, or floats for scalar inputs.
    """
    x, m = _binomial_inputs(successes, n)
    z = _z(confidence)
    z2 = z * z
    centre = (x + z2 / 2) / (m + z2)
    half = z / (m + z2) * np.sqrt(x * (m - x) / m + z2 / 4)
    low = np.where(x == 0, 0.0, np.clip(centre - half, 0.0, 1.0))  # exact ends, not rounding noise
    high = np.where(x == m, 1.0, np.clip(centre + half, 0.0, 1.0))
    scalar = _is_scalar(successes, n)
    return _scalar_if(scalar, low), _scalar_if(scalar, high)


def clopper_pearson_interval(
    successes: ArrayLike, n: ArrayLike, confidence: float = 0.95
) -> tuple[NDArray | float, NDArray | float]:
    """Which success rates are consistent with x passes in n runs, never under-covering? Clopper-Pearson.

    The exact (conservative) interval from beta quantiles (Clopper & Pearson, 1934). Returns (low, high).
    """
    from scipy import stats

    x, m = _binomial_inputs(successes, n)
    alpha = 1.0 - check_confidence(confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(x > 0, stats.beta.ppf(alpha / 2, np.maximum(x, 1), m - x + 1), 0.0)
        high = np.where(x < m, stats.beta.ppf(1 - alpha / 2, x + 1, np.maximum(m - x, 1)), 1.0)
    scalar = _is_scalar(successes, n)
    return _scalar_if(scalar, np.atleast_1d(low)), _scalar_if(scalar, np.atleast_1d(high))


def mcnemar_exact(b: int, c: int) -> float:
    """Do two versions differ on paired runs? Exact two-sided McNemar p-value from the discordant pairs.

    b = pairs where only the first passed, c = pairs where only the second passed; the test is the
    binomial test of b against b + c at one half (McNemar, 1947; as statsmodels `mcnemar(exact=True)`).
    """
    from scipy import stats

    counts = int_array([b, c], "discordant counts")
    b_, c_ = int(counts[0]), int(counts[1])
    total = b_ + c_
    if total == 0:
        return 1.0
    return float(min(1.0, 2.0 * stats.binom.cdf(min(b_, c_), total, 0.5)))


def discordant_pairs(first: ArrayLike, second: ArrayLike) -> tuple[int, int]:
    """On paired runs, how often did only the first pass, and how often only the second?"""
    a = bool_array(first, "first")
    b = bool_array(second, "second")
    same_length(first=a, second=b)
    return int((a & ~b).sum()), int((~a & b).sum())


@dataclass(frozen=True)
class Agreement:
    """Chance-corrected agreement of two raters on the same items."""

    kappa: float
    observed: float
    expected: float
    n: int
    dropped: int


def cohen_kappa(judge: ArrayLike, reference: ArrayLike) -> Agreement:
    """How far beyond chance does a judge agree with the tests? Cohen's kappa (Cohen, 1960).

    Labels may be any hashable values; items where either label is missing (None/NaN) are dropped and
    counted. kappa = (p_o - p_e) / (1 - p_e).
    """
    j = np.asarray(judge, dtype=object)
    r = np.asarray(reference, dtype=object)
    if j.ndim != 1 or r.ndim != 1:
        raise ValueError("judge and reference must be one-dimensional")
    same_length(judge=j, reference=r)

    def missing(a: np.ndarray) -> NDArray[np.bool_]:
        return np.array([v is None or (isinstance(v, float) and math.isnan(v)) for v in a], dtype=bool)

    keep = ~(missing(j) | missing(r))
    j, r = j[keep], r[keep]
    if j.size == 0:
        raise ValueError("no item has both a judge label and a reference label")
    labels = sorted(set(j.tolist()) | set(r.tolist()), key=repr)
    index = {label: i for i, label in enumerate(labels)}
    ji = np.array([index[v] for v in j])
    ri = np.array([index[v] for v in r])
    table = np.zeros((len(labels), len(labels)))
    np.add.at(table, (ji, ri), 1)
    table /= table.sum()
    observed = float(np.trace(table))
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if expected >= 1.0:
        raise ValueError("kappa is undefined when both raters give every item the same single label")
    return Agreement(
        kappa=(observed - expected) / (1.0 - expected),
        observed=observed,
        expected=expected,
        n=int(j.size),
        dropped=int((~keep).sum()),
    )


@dataclass(frozen=True)
class CostPerSolve:
    """Spend divided by the passes it bought."""

    value: float
    total_cost: float
    solved: int
    runs: int
    dropped: int


def cost_per_solved_task(cost: ArrayLike, solved: ArrayLike) -> CostPerSolve:
    """What does one passing run cost, counting the spend of the attempts that failed?

    Sum of cost over all runs divided by the number of passing runs (infinite when nothing passed).
    Runs with a missing cost or a missing outcome are dropped and counted, never priced at 0.
    """
    cost_arr = float_array(cost, "cost")
    solved_arr = float_array(solved, "solved")
    same_length(cost=cost_arr, solved=solved_arr)
    keep = ~(np.isnan(cost_arr) | np.isnan(solved_arr))
    if (cost_arr[keep] < 0).any():
        raise ValueError("cost must be >= 0")
    if not np.isin(solved_arr[keep], (0.0, 1.0)).all():
        raise ValueError("solved must hold 0/1 or booleans")
    total = float(cost_arr[keep].sum())
    passes = int(solved_arr[keep].sum())
    value = total / passes if passes else math.inf
    return CostPerSolve(
        value=value, total_cost=total, solved=passes, runs=int(keep.sum()), dropped=int((~keep).sum())
    )
