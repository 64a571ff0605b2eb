"""From a validated runs table to what the report sections share: counted runs, the score, compliance."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from orchestrator.report.runs_table import present
from orchestrator.stats import Exclusion, compliant


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

    def seed_for(self, *keys: object) -> int:
        """A seed for one statistic, derived from the report seed and stable names (same run, same draws)."""
        text = "\x1f".join(str(k) for k in keys).encode()
        return (self.seed * 1_000_003 + zlib.crc32(text)) % (2**63)

    def of(self, pairing: str) -> pd.DataFrame:
        return self.runs[self.runs["pairing"] == pairing]


def prepare(runs: pd.DataFrame, exclusion: Exclusion, seed: int) -> Prepared:
    """Drop attempts that do not count, pick the reported score and mark compliance under `exclusion`.

    The reported score is `holdout_score` when the table has one, else `eval_score`. Without verdict
    columns every run counts as compliant (there is nothing to exclude on); a missing verdict column
    under an exclusion that needs it reads as "not audited" for every run.
    """
    counted_mask = (
        runs["counted"].fillna(1.0) == 1.0 if "counted" in runs else pd.Series(True, index=runs.index)
    )
    df = runs.loc[counted_mask].copy()
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
    pairings = list(dict.fromkeys(df["pairing"].tolist()))
    return Prepared(
        runs=df,
        not_counted=int((~counted_mask).sum()),
        score_column=score_column,
        exclusion=exclusion,
        pairings=pairings,
        has_verdicts=has_verdicts,
        seed=int(seed),
    )
