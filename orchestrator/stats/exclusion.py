"""Which runs count as compliant: the exclusion rule is a parameter, because the tails move with it.

Each run carries one verdict per compliance rule: "flagged", "clear", "unanalysable", or blank (not
audited). "unanalysable" is the audit's "found nothing, but the code's data flow can pass where the trace
cannot see" (dynamic code, computed names: compliance/opaque.py); it is never read as clear unless the study
says so: `Unanalysable` chooses how such a verdict counts (default FLAGGED: the run is excluded, as if
flagged; UNKNOWN: neither compliant nor excluded, dropped and counted; CLEAR: trusted as clear).
The exclusion says which rules remove a run: none, one of the two default rules, both (a run flagged by
either rule is removed, the default), the optional rule `eval_features_in_fit` alone, or all three. A run
left unaudited under an applied rule is neither compliant nor excluded: it is unknown, and is dropped and
counted by whoever needs compliance.

`eval_features_in_fit` (evaluation features, not labels, reaching a fit: adversarial validation,
pseudo-labels) is reported by the audit but is not part of the default exclusion; a study chooses it with
`Exclusion.EVAL_FEATURES_IN_FIT` or `Exclusion.ALL` and passes its verdict column to `compliant`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # numpy is imported inside the functions: the CLI parser imports `Exclusion`
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

#: the compliance rules of the default exclusion, in the runs table's column names
RULES = ("eval_labels_in_fit", "frame_statistics")
#: rules the audit also records that a study may choose to exclude on (not by default)
OPTIONAL_RULES = ("eval_features_in_fit",)
ALL_RULES = RULES + OPTIONAL_RULES

FLAGGED = "flagged"
CLEAR = "clear"
UNANALYSABLE = "unanalysable"


_E = TypeVar("_E", bound=StrEnum)


def _choice(cls: type[_E], value: str | _E, what: str) -> _E:
    """`cls(value)`, or a ValueError naming `what` and every choice."""
    try:
        return cls(value)
    except ValueError:
        choices = ", ".join(e.value for e in cls)
        raise ValueError(f"unknown {what} {value!r}; choose one of: {choices}") from None


class Unanalysable(StrEnum):
    """How a rule's `unanalysable` verdict counts under an exclusion (the study's choice)."""

    #: excluded, as a flag would (the default: an audit that could not look does not clear a run)
    FLAGGED = "flagged"
    #: unknown, as a run not audited
    UNKNOWN = "unknown"
    #: clear
    CLEAR = "clear"

    @classmethod
    def parse(cls, value: str | Unanalysable) -> Unanalysable:
        return _choice(cls, value, "treatment of unanalysable")


class Exclusion(StrEnum):
    """Which compliance rules exclude a run."""

    NOTHING = "nothing"
    EVAL_LABELS_IN_FIT = "eval_labels_in_fit"
    FRAME_STATISTICS = "frame_statistics"
    #: the two default rules (the default exclusion)
    BOTH = "both"
    EVAL_FEATURES_IN_FIT = "eval_features_in_fit"
    #: the two default rules and eval_features_in_fit
    ALL = "all"

    @property
    def rules(self) -> tuple[str, ...]:
        if self is Exclusion.NOTHING:
            return ()
        if self is Exclusion.BOTH:
            return RULES
        if self is Exclusion.ALL:
            return ALL_RULES
        return (self.value,)

    @classmethod
    def parse(cls, value: str | Exclusion) -> Exclusion:
        return _choice(cls, value, "exclusion")


def verdicts(values: ArrayLike, name: str, unanalysable: str | Unanalysable = Unanalysable.FLAGGED
             ) -> NDArray[np.float64]:
    """Which runs did this rule flag? 1.0 flagged, 0.0 clear, NaN unaudited.

    Accepts "flagged"/"clear"/"unanalysable" (any case), booleans (True = flagged) and blanks (None, NaN,
    ""); "unanalysable" counts as `unanalysable` says (default: flagged). Any other verdict word is
    neither clear nor flagged: NaN, so a run with it is unknown under the rule, never compliant. Anything
    that is not a word (a number, a phrase) is an error.
    """
    import numpy as np

    as_number = {Unanalysable.FLAGGED: 1.0, Unanalysable.UNKNOWN: np.nan, Unanalysable.CLEAR: 0.0}[
        Unanalysable.parse(unanalysable)]
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
        elif text == UNANALYSABLE:
            out.append(as_number)
        elif text.replace("_", "").replace("-", "").isalpha():
            out.append(np.nan)
        else:
            raise ValueError(f"{name}: verdict must be 'flagged', 'clear', 'unanalysable' or blank, got {v!r}")
    return np.array(out, dtype=np.float64)


def compliant(
    eval_labels_in_fit: ArrayLike,
    frame_statistics: ArrayLike,
    exclusion: str | Exclusion,
    eval_features_in_fit: ArrayLike | None = None,
    unanalysable: str | Unanalysable = Unanalysable.FLAGGED,
) -> NDArray[np.float64]:
    """Under this exclusion rule, which runs count as compliant? 1.0 yes, 0.0 excluded, NaN unknown.

    An applied rule's `unanalysable` verdict counts as `unanalysable` says: by default as flagged.

    A run is excluded when any applied rule flagged it; it is unknown when no applied rule flagged it
    but some applied rule did not audit it. With Exclusion.NOTHING every run is compliant. Without an
    `eval_features_in_fit` column that rule counts as not audited (it matters only to the exclusions
    that apply it).
    """
    import numpy as np

    rule = Exclusion.parse(exclusion)
    columns = {
        "eval_labels_in_fit": verdicts(eval_labels_in_fit, "eval_labels_in_fit", unanalysable),
        "frame_statistics": verdicts(frame_statistics, "frame_statistics", unanalysable),
    }
    if columns["eval_labels_in_fit"].shape != columns["frame_statistics"].shape:
        raise ValueError("the two verdict columns must have the same length")
    if eval_features_in_fit is None:
        columns["eval_features_in_fit"] = np.full(columns["eval_labels_in_fit"].shape, np.nan)
    else:
        columns["eval_features_in_fit"] = verdicts(eval_features_in_fit, "eval_features_in_fit", unanalysable)
        if columns["eval_features_in_fit"].shape != columns["eval_labels_in_fit"].shape:
            raise ValueError("the verdict columns must have the same length")
    n = columns["eval_labels_in_fit"].size
    if not rule.rules:
        return np.ones(n)
    applied = np.column_stack([columns[r] for r in rule.rules])
    flagged = (applied == 1.0).any(axis=1)
    unknown = np.isnan(applied).any(axis=1) & ~flagged
    out = np.where(flagged, 0.0, 1.0)
    out[unknown] = np.nan
    return out
