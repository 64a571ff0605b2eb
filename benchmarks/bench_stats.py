"""Time the two hot paths of orchestrator.stats against their targets, on one core.

    python benchmarks/bench_stats.py

Prints the best of a few repeats for:
- 20,000 task-bootstrap resamples over 312 runs (target: under 1 s), for 26 tasks x 12 runs and, as the
  worst case, 312 tasks with one run each;
- the best-of-k table (k = 1, 3, 5, 10) with 2,000 outer resamples over 6 pairings of 52 runs
  (target: under 2 s).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core, as the targets say

import time  # noqa: E402 - after the thread variables
from collections.abc import Callable  # noqa: E402 - after the thread variables

import numpy as np  # noqa: E402 - after the thread variables

from orchestrator.stats import best_of_k_table, task_bootstrap  # noqa: E402 - after the thread variables


def _best_of(fn: Callable[[], object], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _bootstrap_case(tasks: int, runs_per_task: int) -> Callable[[], object]:
    rng = np.random.default_rng(0)
    p = rng.beta(2, 2, size=tasks)
    ids = np.repeat(np.arange(tasks), runs_per_task)
    y = (rng.random(ids.size) < p[ids]).astype(float)
    return lambda: task_bootstrap(ids, y, n_resamples=20_000, seed=1)


def _best_of_k_case() -> Callable[[], object]:
    rng = np.random.default_rng(0)
    pairings = []
    for i in range(6):
        holdout = rng.normal(0.74 + 0.002 * i, 0.0104, size=52)
        pairings.append((holdout + rng.normal(0, 0.004, size=52), holdout, rng.random(52) > 0.15))

    def run() -> None:
        for j, (e, h, c) in enumerate(pairings):
            best_of_k_table(e, h, c, ks=(1, 3, 5, 10), n_resamples=2_000, seed=j)

    return run


def main() -> None:
    cases = [
        ("task bootstrap, 20,000 resamples, 26 tasks x 12 runs = 312 runs", _bootstrap_case(26, 12), 1.0),
        ("task bootstrap, 20,000 resamples, 312 tasks x 1 run (worst case)", _bootstrap_case(312, 1), 1.0),
        ("best-of-k table, k=1,3,5,10, 2,000 outer resamples, 6 pairings x 52 runs", _best_of_k_case(), 2.0),
    ]
    for name, fn, target in cases:
        seconds = _best_of(fn)
        print(f"{name}: {seconds:.3f} s (target {target:.0f} s, {seconds / target:.1%} of it)")


if __name__ == "__main__":
    main()
