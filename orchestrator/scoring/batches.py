"""Which rows go to predict_proba together, and the batch check that compares a row across contexts.

Rows live in one numbered space (`RowSpace`, scoring/data.py): the scored set's rows first (holdout or
later), then the evaluation file's rows, then the training file's rows, all as feature lines only. The plan
is seeded and made on the host:

- **main batches**: every scored row once, shuffled, at most `batch_rows` each; their predictions make the
  metrics;
- **eval batches**: every evaluation row once, the same way; their predictions make the eval score sbx
  computes (labels never leave the host);
- **check contexts** for a sample of `check_rows` scored rows, each predicted again in company the main
  batch never gave it: alone (`single`), in small batches of 2 to 32 mixed across main batches (`small`),
  and, spanning the sizes the model saw, two contexts at the training frame's size: the check rows among
  other rows of the scored set (`train_size_scored`: per-key counts, ranks and means of the scored period
  reach the range the model learnt on), and among training rows (`train_size_train`: keys shared with the
  training period reach it too). A feature computed from the frame moves a row's prediction between these.

Main, eval, single and small batches are interleaved at seeded positions, so the code cannot tell from the
order which answers will be compared; the two large contexts come last, so every check row's first context
is a main, single or small one (see `fresh_plan` for why that matters).

`fresh_plan` is the second check, in a freshly started scorer: first the first batch of the main plan
again, exactly (a control: a deterministic train.py gives the same answers), then the check rows in a new
training-size context of the scored set, where they are seen for the first time in that process. Answers
cached per row in the first container cannot hide a dependence there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

MAIN, EVAL, SINGLE, SMALL = "main", "eval", "single", "small"
TRAIN_SIZE_SCORED, TRAIN_SIZE_TRAIN, REPLAY, FRESH = "train_size_scored", "train_size_train", "replay", "fresh"
CHECK_ROLES = (SINGLE, SMALL, TRAIN_SIZE_SCORED, TRAIN_SIZE_TRAIN)


@dataclass(frozen=True)
class Batch:
    role: str
    rows: np.ndarray  # ids in the row space


@dataclass(frozen=True)
class Layout:
    """Where each kind of row sits in the row space: scored [0, n), eval [n, n+m), train [n+m, n+m+t)."""

    n: int
    n_eval: int = 0
    n_train: int = 0

    @property
    def eval_ids(self) -> np.ndarray:
        return np.arange(self.n, self.n + self.n_eval)

    @property
    def train_ids(self) -> np.ndarray:
        return np.arange(self.n + self.n_eval, self.n + self.n_eval + self.n_train)


@dataclass(frozen=True)
class BatchPlan:
    layout: Layout
    batches: tuple[Batch, ...]
    check_rows: np.ndarray  # the sampled scored rows

    @property
    def n(self) -> int:
        return self.layout.n

    @property
    def main_batches(self) -> int:
        return sum(b.role == MAIN for b in self.batches)

    @property
    def is_check(self) -> tuple[bool, ...]:
        return tuple(b.role in CHECK_ROLES for b in self.batches)

    @property
    def rows_sent(self) -> int:
        return sum(len(b.rows) for b in self.batches)


def _split(ids: np.ndarray, size: int) -> list[np.ndarray]:
    return [ids[i:i + size] for i in range(0, len(ids), size)]


def plan_batches(n: int, *, batch_rows: int, check_rows: int, seed: int, singles: int = 64,
                 max_check_batch: int = 32, n_eval: int = 0, n_train: int = 0,
                 large_contexts: bool = True) -> BatchPlan:
    """The batches for n scored rows (and `n_eval` evaluation rows, `n_train` training rows in the space)."""
    if n < 1 or batch_rows < 1 or check_rows < 0 or n_eval < 0 or n_train < 0:
        raise ValueError(f"need n >= 1, batch_rows >= 1, check_rows >= 0; got {n}, {batch_rows}, {check_rows}")
    layout = Layout(n, n_eval, n_train)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    batches = [Batch(MAIN, b) for b in _split(order, batch_rows)]
    if n_eval:
        batches += [Batch(EVAL, b) for b in _split(n + rng.permutation(n_eval), batch_rows)]
    sample = rng.choice(n, size=min(check_rows, n), replace=False)
    k = len(sample)
    n_single = min(singles, k)
    batches += [Batch(SINGLE, sample[i:i + 1]) for i in range(n_single)]
    i, cap = n_single, max(2, min(max_check_batch, batch_rows // 2 or 1))
    while i < k:
        size = int(rng.integers(2, cap + 1))
        batches.append(Batch(SMALL, sample[i:i + size]))
        i += size
    positions = rng.permutation(len(batches))
    batches = [batches[j] for j in np.argsort(positions, kind="stable")]
    if large_contexts and k and n_train:
        batches.append(Batch(TRAIN_SIZE_SCORED, _scored_context(rng, n, sample, n_train)))
        others = rng.choice(layout.train_ids, size=max(0, n_train - k), replace=False)
        batches.append(Batch(TRAIN_SIZE_TRAIN, rng.permutation(np.concatenate([others, sample]))))
    return BatchPlan(layout=layout, batches=tuple(batches), check_rows=np.sort(sample))


def _scored_context(rng: np.random.Generator, n: int, sample: np.ndarray, size: int) -> np.ndarray:
    """The check rows among other scored rows, `size` rows in all (all scored rows when there are fewer)."""
    rest = np.setdiff1d(np.arange(n), sample, assume_unique=False)
    others = rng.choice(rest, size=min(len(rest), max(0, size - len(sample))), replace=False)
    return rng.permutation(np.concatenate([others, sample]))


def fresh_plan(plan: BatchPlan, *, seed: int) -> BatchPlan:
    """The second check's batches: the main plan's first batch again, then the check rows in a new
    training-size context of the scored set (`layout.n_train` rows, or the batch size when unknown)."""
    first = plan.batches[0]
    rng = np.random.default_rng(seed + 7919)
    size = plan.layout.n_train or max(len(b.rows) for b in plan.batches)
    batches = [Batch(REPLAY, first.rows)]
    if len(plan.check_rows):
        batches.append(Batch(FRESH, _scored_context(rng, plan.n, plan.check_rows, size)))
    return BatchPlan(layout=plan.layout, batches=tuple(batches), check_rows=plan.check_rows)


@dataclass(frozen=True)
class BatchCheck:
    rows_checked: int
    rows_changed: int
    max_abs_change: float
    tolerance: float

    @property
    def batch_dependent(self) -> bool:
        return self.rows_changed > 0

    def to_json(self) -> dict[str, float | int]:
        return {"rows_checked": self.rows_checked, "rows_changed": self.rows_changed,
                "max_abs_change": self.max_abs_change, "tolerance": self.tolerance}


def compare(main: np.ndarray, rows: np.ndarray, again: np.ndarray, tolerance: float = 1e-6) -> BatchCheck:
    """Did any row's prediction move by more than `tolerance` when predicted in another batch?
    `main[r]` is row r's prediction in its main batch; `again[j]` is row `rows[j]`'s in its check batch."""
    if rows.shape != again.shape[:1] or again.shape[1:] != main.shape[1:]:
        raise ValueError(f"rows {rows.shape} and repeated predictions {again.shape} differ in shape")
    if len(rows) == 0:
        return BatchCheck(0, 0, 0.0, tolerance)
    change = row_change(again, main[rows])
    return BatchCheck(rows_checked=len(rows), rows_changed=int((change > tolerance).sum()),
                      max_abs_change=float(change.max()), tolerance=tolerance)


def row_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How far each row's prediction moved: |a - b|, the largest over a row's numbers when a row has
    several (a multiclass row's class probabilities)."""
    change = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    return change.reshape(len(change), -1).max(axis=1) if change.ndim > 1 else change


def compare_contexts(main: np.ndarray, rows: np.ndarray, again: dict[str, dict[int, Any]],
                     tolerance: float = 1e-6) -> tuple[BatchCheck, dict[str, BatchCheck], set[int]]:
    """The check over every context a row was predicted in again: a row changed when it moved by more than
    `tolerance` in any of them. `again[role][r]` is row r's prediction in that context. Returns the check
    over all contexts, the check per context, and the rows that changed."""
    per: dict[str, BatchCheck] = {}
    worst = np.zeros(len(rows))
    for role, values in again.items():
        got = np.array([int(r) in values for r in rows])
        if not got.any():
            continue
        ids = rows[got]
        repeated = np.array([values[int(r)] for r in ids], dtype=float)
        per[role] = compare(main, ids, repeated, tolerance)
        worst[got] = np.maximum(worst[got], row_change(repeated, main[ids]))
    if not per:
        return BatchCheck(0, 0, 0.0, tolerance), per, set()
    seen = np.array([any(int(r) in v for v in again.values()) for r in rows])
    overall = BatchCheck(rows_checked=int(seen.sum()), rows_changed=int((worst > tolerance).sum()),
                         max_abs_change=float(worst.max()), tolerance=tolerance)
    return overall, per, {int(r) for r in rows[worst > tolerance]}
