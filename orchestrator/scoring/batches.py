"""Which rows go to predict_proba together, and the batch check that compares a row across contexts.

The plan is seeded and made on the host. Main batches cover every row once, shuffled, at most `batch_rows`
each. Check batches hold a sample of rows again in other company: some alone, the rest in small batches
mixed across main batches. Check batches are interleaved with the main ones at seeded positions, so the
code under test cannot tell from the order which answers will be compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BatchPlan:
    """`batches[i]` holds row positions; `is_check[i]` says whether it is a check batch."""

    n: int
    batches: tuple[np.ndarray, ...]
    is_check: tuple[bool, ...]
    check_rows: np.ndarray  # the sampled rows, each in exactly one check batch

    @property
    def main_batches(self) -> int:
        return self.is_check.count(False)


def plan_batches(n: int, *, batch_rows: int, check_rows: int, seed: int,
                 singles: int = 64, max_check_batch: int = 32) -> BatchPlan:
    """The batches for n rows: all rows once in shuffled main batches, and `check_rows` sampled rows again."""
    if n < 1 or batch_rows < 1 or check_rows < 0:
        raise ValueError(f"need n >= 1, batch_rows >= 1, check_rows >= 0; got {n}, {batch_rows}, {check_rows}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    main = [order[i:i + batch_rows] for i in range(0, n, batch_rows)]
    sample = rng.choice(n, size=min(check_rows, n), replace=False)
    k = len(sample)
    n_single = min(singles, k)
    check = [sample[i:i + 1] for i in range(n_single)]
    i, cap = n_single, max(2, min(max_check_batch, batch_rows // 2 or 1))
    while i < k:
        size = int(rng.integers(2, cap + 1))
        check.append(sample[i:i + size])
        i += size
    kinds = np.array([False] * len(main) + [True] * len(check))
    # Seeded interleaving: main and check batches shuffled together.
    positions = rng.permutation(len(kinds))
    order_idx = np.argsort(positions, kind="stable")
    all_batches = main + check
    batches = tuple(all_batches[j] for j in order_idx)
    is_check = tuple(bool(kinds[j]) for j in order_idx)
    return BatchPlan(n=n, batches=batches, is_check=is_check, check_rows=np.sort(sample))


@dataclass(frozen=True)
class BatchCheck:
    rows_checked: int
    rows_changed: int
    max_abs_change: float
    tolerance: float

    @property
    def batch_dependent(self) -> bool:
        return self.rows_changed > 0


def compare(main: np.ndarray, rows: np.ndarray, again: np.ndarray, tolerance: float = 1e-6) -> BatchCheck:
    """Did any row's prediction move by more than `tolerance` when predicted in another batch?
    `main[r]` is row r's prediction in its main batch; `again[j]` is row `rows[j]`'s in its check batch."""
    if rows.shape != again.shape:
        raise ValueError(f"rows {rows.shape} and repeated predictions {again.shape} differ in shape")
    if len(rows) == 0:
        return BatchCheck(0, 0, 0.0, tolerance)
    change = np.abs(again - main[rows])
    return BatchCheck(rows_checked=len(rows), rows_changed=int((change > tolerance).sum()),
                      max_abs_change=float(change.max()), tolerance=tolerance)
