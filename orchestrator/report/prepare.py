"""From a validated runs table to what the report sections share: counted runs, the score, compliance."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from orchestrator.failures import DataError
from orchestrator.report.runs_table import present
from orchestrator.specs.study import ReportSpec
from orchestrator.specs.tasktypes import direction_words, metric_by_name
from orchestrator.stats import Exclusion, compliant

if TYPE_CHECKING:
    from orchestrator.report.calibration import JudgeCalibration

#: the canonical row order: every table, reference level and resample is built over rows in this order,
#: so the report does not depend on the order of the input's rows
CANONICAL_ORDER = ("pairing", "task", "repeat")


@dataclass(frozen=True)
class Prepared:
    """The counted runs with two derived columns: `score` and `compliant` (1.0, 0.0 or NaN = unknown)."""

    runs: pd.DataFrame
    not_counted: int
    score_column: str | None
    exclusion: Exclusion
    pairings: list[str]
    has_verdicts: bool
    seed: int
    settings: ReportSpec = ReportSpec()
    #: spend measured by sbx's gateway (a ledger's runs), not imported with the table
    costs_from_gateway: bool = False
    #: judge spec digest -> its calibration from the ledger (None: the ledger has no verdict of it); for the
    #: judge section of a study graded only by a judge (report/calibration.py)
    judge_calibrations: dict[str, JudgeCalibration | None] = field(default_factory=dict)
    #: the task's metric the scores are in (the runs' `metric` column; None: not named, ranked higher-is-better
    #: as every score was before metrics had names) and its direction: what "best", "gain" and "below the
    #: baseline" mean in every table
    metric: str | None = None
    higher_is_better: bool = True

    @property
    def sign(self) -> float:
        """+1 for a higher-is-better metric, -1 for a lower-is-better one: sign * (a - b) is a's improvement."""
        return 1.0 if self.higher_is_better else -1.0

    @property
    def metric_words(self) -> str:
        """The metric and its direction as the report prints them: 'rmse (lower is better)'."""
        return direction_words(self.metric)

    def top(self, runs: pd.DataFrame, column: str, n: int) -> pd.DataFrame:
        """The `n` best rows of `runs` by `column` in the metric's direction; ties keep the rows' order (the
        canonical one, never the input's)."""
        return runs.sort_values(column, ascending=not self.higher_is_better, kind="stable").head(n)

    def best(self, values: pd.Series | np.ndarray) -> float:
        """The best of some scores in the metric's direction (NaN for none)."""
        v = np.asarray(values, dtype=float)
        v = v[~np.isnan(v)]
        if v.size == 0:
            return float("nan")
        return float(v.max() if self.higher_is_better else v.min())

    def worst(self, values: pd.Series | np.ndarray) -> float:
        """The worst of some scores in the metric's direction (NaN for none)."""
        v = np.asarray(values, dtype=float)
        v = v[~np.isnan(v)]
        if v.size == 0:
            return float("nan")
        return float(v.min() if self.higher_is_better else v.max())

    def worse_than(self, values: pd.Series, reference: float) -> pd.Series:
        """Which scores are worse than `reference` in the metric's direction."""
        return values < reference if self.higher_is_better else values > reference

    def seed_for(self, *keys: object) -> int:
        """A seed for one statistic, derived from the report seed and stable names (same run, same draws)."""
        text = "\x1f".join(str(k) for k in keys).encode()
        return (self.seed * 1_000_003 + zlib.crc32(text)) % (2**63)

    def of(self, pairing: str) -> pd.DataFrame:
        return self.runs[self.runs["pairing"] == pairing]

    def levels(self, factor: str) -> list[str]:
        """A factor's levels: the named reference level first, then the rest sorted (never row order)."""
        found = sorted({str(v) for v in self.runs[factor].dropna()})
        ref = self.settings.reference.get(factor)
        if ref is None:
            return found
        if ref not in found:
            raise ValueError(f"reference level {ref!r} of {factor} is not among its levels: {', '.join(found)}")
        return [ref] + [v for v in found if v != ref]

    def baseline(self, column: str | None = None) -> float | None:
        """The starting code's score on `column` (default: the reported score), if given."""
        # baseline's keys are Literal column names; get() of another str just gives None
        return self.settings.baseline.get(column or self.score_column or "")  # type: ignore[call-overload]


def prepare(
    runs: pd.DataFrame,
    exclusion: Exclusion,
    seed: int,
    settings: ReportSpec | None = None,
    *,
    costs_from_gateway: bool = False,
    judge_calibrations: dict[str, JudgeCalibration | None] | None = None,
) -> Prepared:
    """Drop attempts that do not count, pick the reported score and mark compliance under `exclusion`.

    The reported score is `holdout_score` when the table has one, else `eval_score`. Without verdict
    columns every run counts as compliant (there is nothing to exclude on); a missing verdict column
    under an exclusion that needs it reads as "not audited" for every run.
    """
    counted_mask = (
        runs["counted"].fillna(1.0) == 1.0 if "counted" in runs else pd.Series(True, index=runs.index)
    )
    df = runs.loc[counted_mask]
    # counted rows have unique keys (validate_runs checks), so this order is total
    df = df.sort_values(
        list(CANONICAL_ORDER), key=lambda col: col.astype(str) if col.dtype == object else col
    ).reset_index(drop=True)
    score_column = next((c for c in ("holdout_score", "eval_score") if present(df, c)), None)
    df["score"] = df[score_column] if score_column else np.nan
    has_verdicts = any(present(df, r) for r in ("eval_labels_in_fit", "frame_statistics"))
    if has_verdicts:
        blank = pd.Series([None] * len(df), index=df.index, dtype=object)
        df["compliant"] = compliant(
            df.get("eval_labels_in_fit", blank).to_numpy(),
            df.get("frame_statistics", blank).to_numpy(),
            exclusion,
        )
    else:
        df["compliant"] = 1.0
    # compliant and scored: what yields, counts and every score table use (an unscorable run is a failed
    # attempt, not a compliant one, whatever its audit said)
    df["compliant_scored"] = (df["compliant"] == 1.0) & df["score"].notna()
    metric = _metric(df)
    pairings = sorted(df["pairing"].astype(str).unique().tolist())
    return Prepared(
        runs=df,
        not_counted=int((~counted_mask).sum()),
        score_column=score_column,
        exclusion=exclusion,
        pairings=pairings,
        has_verdicts=has_verdicts,
        seed=int(seed),
        settings=settings or ReportSpec(),
        costs_from_gateway=costs_from_gateway,
        judge_calibrations=dict(judge_calibrations or {}),
        metric=metric,
        higher_is_better=metric_by_name(metric).higher_is_better if metric else True,
    )


def _metric(df: pd.DataFrame) -> str | None:
    """The one metric the counted runs' scores are in. Scores in two metrics (an AUC beside an RMSE) cannot
    be ranked or pooled together: refused, naming them."""
    if "metric" not in df:
        return None
    named = sorted({str(m) for m in df["metric"].dropna()})
    if len(named) > 1:
        raise DataError(f"the runs are scored in {len(named)} metrics ({', '.join(named)}); a report ranks one "
                        "metric: report each task's runs apart")
    if named:
        try:
            metric_by_name(named[0])
        except ValueError as exc:
            raise DataError(f"column metric: {exc}") from None
    return named[0] if named else None
