"""Class-balanced, period-bound, disjoint slices drawn deterministically from a source's task frame.

The reference study scored on a holdout of exactly 500,000 delayed and 500,000 on-time flights, so every
slice here is exactly half Y and half N. Slices come from periods in time order (train earliest, eval and
holdout later, `later` last) so a model is always judged on flights after the ones it learned from, and
eval and holdout share a period but never a source row.

Determinism: each period's pool is stably sorted by source row id before anything random happens, and
each period gets its own generator ``numpy.random.default_rng([seed, period_index])``. PCG64 streams are
platform-independent, so the same input and seed give the same rows on every machine, and changing one
period's slice sizes never changes what is drawn from another period.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from orchestrator.data.columns import LABEL, NEGATIVE, POSITIVE, ROW_ID
from orchestrator.failures import DataError

SliceName = Literal["train", "eval", "holdout", "later"]
SLICES: Final[tuple[SliceName, ...]] = ("train", "eval", "holdout", "later")
#: index of the source period (earliest = 0) each slice is drawn from
SLICE_PERIOD: Final[dict[SliceName, int]] = {"train": 0, "eval": 1, "holdout": 1, "later": 2}


class SliceSizes(BaseModel):
    """Rows per slice; each must be even and positive so it splits into equal halves of Y and N."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    train: int
    eval: int
    holdout: int
    later: int

    def of(self, name: SliceName) -> int:
        return int(getattr(self, name))


def check_sizes(sizes: SliceSizes) -> None:
    """Reject sizes that cannot be split 50/50 before any data is read."""
    for name in SLICES:
        rows = sizes.of(name)
        if rows <= 0 or rows % 2:
            raise DataError(
                f"slice {name!r}: size {rows} must be a positive even number "
                f"(each slice is exactly half {POSITIVE} and half {NEGATIVE})"
            )


def slices_of_period(index: int) -> tuple[SliceName, ...]:
    """Slices drawn from period `index`, in draw order (which fixes who gets which rows)."""
    return tuple(name for name in SLICES if SLICE_PERIOD[name] == index)


def draw_balanced(
    pool: pd.DataFrame,
    wanted: Sequence[tuple[SliceName, int]],
    *,
    seed: int,
    period_index: int,
    period: str,
) -> Iterator[tuple[SliceName, pd.DataFrame]]:
    """Draw disjoint, exactly balanced slices from one period's pool, one at a time.

    Y rows and N rows are each put in one random order; slice k takes the next rows/2 of each, so slices
    of the same period can never share a source row. Rows within a slice are then shuffled so the classes
    are interleaved. Yields lazily so the caller can write each slice before the next is checked.
    `period` describes the period for error messages.
    """
    rng = np.random.default_rng([seed, period_index])
    pool = pool.sort_values(ROW_ID, kind="stable", ignore_index=True)
    is_pos = (pool[LABEL] == POSITIVE).to_numpy()
    positives, negatives = pool[is_pos], pool[~is_pos]
    pos_order = rng.permutation(len(positives))
    neg_order = rng.permutation(len(negatives))
    taken = 0
    taken_by: list[str] = []
    for name, rows in wanted:
        half = rows // 2
        if taken + half > len(positives) or taken + half > len(negatives):
            raise DataError(_shortfall(name, rows, period, len(positives), len(negatives), taken, taken_by))
        picked = pd.concat(
            [
                positives.iloc[pos_order[taken : taken + half]],
                negatives.iloc[neg_order[taken : taken + half]],
            ],
            ignore_index=True,
        )
        taken += half
        taken_by.append(f"{name!r}")
        yield name, picked.iloc[rng.permutation(len(picked))].reset_index(drop=True)


def _shortfall(
    name: str, rows: int, period: str, n_pos: int, n_neg: int, taken: int, taken_by: list[str]
) -> str:
    half = rows // 2
    message = (
        f"slice {name!r} needs {rows} rows ({half} {POSITIVE} + {half} {NEGATIVE}) from period {period}, "
        f"which has {n_pos} {POSITIVE} and {n_neg} {NEGATIVE}"
    )
    if taken:
        message += f", of which {taken} {POSITIVE} + {taken} {NEGATIVE} already went to {', '.join(taken_by)}"
    most = 2 * (min(n_pos, n_neg) - taken)
    return message + f"; at most {max(most, 0)} balanced rows are left for it"
