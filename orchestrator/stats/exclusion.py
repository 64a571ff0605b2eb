"""Which runs count as compliant: the exclusion rule is a parameter, because the tails move with it.

Each run carries one verdict per compliance rule: "flagged", "clear", or blank (not audited).
The exclusion says which rules remove a run: none, one of the two, or both (a run flagged by either
rule is removed). A run left unaudited under an applied rule is neither compliant nor excluded: it
is unknown, and is dropped and counted by whoever needs compliance.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: the compliance rules the audit records, in the runs table's column names
RULES = ("eval_labels_in_fit", "frame_statistics")

FLAGGED = "flagged"
CLEAR = "clear"


class Exclusion(StrEnum):
    """Which compliance rules exclude a run."""

    NOTHING = "nothing"
    EVAL_LABELS_IN_FIT = "eval_labels_in_fit"
    FRAME_STATISTICS = "frame_statistics"
    BOTH = "both"

    @property
    def rules(self) -> tuple[str, ...]:
        if self is Exclusion.NOTHING:
            return ()
        if self is Exclusion.BOTH:
            return RULES
        return (self.value,)

    @classmethod
    def parse(cls, value: str | Exclusion) -> Exclusion:
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(e.value for e in cls)
            raise ValueError(f"unknown exclusion {value!r}; choose one of: {choices}") from None


def verdicts(values: ArrayLike, name: str) -> NDArray[np.float64]:
    """Which runs did this rule flag? 1.0 flagged, 0.0 clear, NaN unaudited.

    Accepts "flagged"/"clear" (any case), booleans (True = flagged) and blanks (None, NaN, "").
    """
    out = []
    for v in np.asarray(values, dtype=object).ravel():
        if v is None or (isinstance(v, float) and np.isnan(v)):
            out.append(np.nan)
            continue
        if isinstance(v, (bool, np.bool_)):
            out.append(1.0 if v else 0.0)
            continue
        text = str(v).strip().lower()
        if text in ("", "nan", "none", "<na>"):
            out.append(np.nan)
        elif text in (FLAGGED, "true", "1"):
            out.append(1.0)
        elif text in (CLEAR, "false", "0"):
            out.append(0.0)
        else:
            raise ValueError(f"{name}: verdict must be 'flagged', 'clear' or blank, got {v!r}")
    return np.array(out, dtype=np.float64)


def compliant(
    eval_labels_in_fit: ArrayLike, frame_statistics: ArrayLike, exclusion: str | Exclusion
) -> NDArray[np.float64]:
    """Under this exclusion rule, which runs count as compliant? 1.0 yes, 0.0 excluded, NaN unknown.

    A run is excluded when any applied rule flagged it; it is unknown when no applied rule flagged it
    but some applied rule did not audit it. With Exclusion.NOTHING every run is compliant.
    """
    rule = Exclusion.parse(exclusion)
    columns = {
        "eval_labels_in_fit": verdicts(eval_labels_in_fit, "eval_labels_in_fit"),
        "frame_statistics": verdicts(frame_statistics, "frame_statistics"),
    }
    if columns["eval_labels_in_fit"].shape != columns["frame_statistics"].shape:
        raise ValueError("the two verdict columns must have the same length")
    n = columns["eval_labels_in_fit"].size
    if not rule.rules:
        return np.ones(n)
    applied = np.column_stack([columns[r] for r in rule.rules])
    flagged = (applied == 1.0).any(axis=1)
    unknown = np.isnan(applied).any(axis=1) & ~flagged
    out = np.where(flagged, 0.0, 1.0)
    out[unknown] = np.nan
    return out
