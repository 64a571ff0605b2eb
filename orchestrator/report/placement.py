"""Where and when runs ran: does the node, the slot, the run order or the start time explain the spread?

Per pairing, the scores of compliant runs (or the pass/fail outcomes of all runs) are centred within task
and checked against node and slot (one-way ANOVA F with a permutation p-value, and the share of variance
beside the share random grouping gives) and against run order and start time (Spearman's rho with a
permutation p-value), by `orchestrator.stats.placement_checks`. The same checks run in `sbx report` for
every study and in the divergence report for each arm.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from orchestrator.report.prepare import Prepared
from orchestrator.report.runs_table import present

#: the runs-table columns the checks read, by check
PLACEMENT_COLUMNS = {"node": "node", "slot": "slot", "run_order": "run_order", "start_time": "started_at"}
ALPHA = 0.05
N_RESAMPLES = 10_000


def checks_frame(checks: Sequence[object], alpha: float = ALPHA) -> pd.DataFrame:
    """One row per pairing (PlacementCheck): each check's statistic, share or rho, p-value, or why it was skipped."""
    rows = []
    for c in checks:
        row: dict[str, object] = {"pairing": c.pairing, "runs": c.runs, "dropped": c.dropped}  # type: ignore[attr-defined]
        for name in ("node", "slot"):
            g = getattr(c, name)
            row[f"{name}_groups"] = g.groups if g else np.nan
            row[f"{name}_f"] = g.f if g else np.nan
            row[f"{name}_share"] = g.share if g else np.nan
            row[f"{name}_null_share"] = g.null_mean_share if g else np.nan
            row[f"{name}_p"] = g.p_value if g else np.nan
        for name in ("run_order", "start_time"):
            r = getattr(c, name)
            row[f"{name}_rho"] = r.rho if r else np.nan
            row[f"{name}_p"] = r.p_value if r else np.nan
        found = [
            n
            for n in ("node", "slot", "run_order", "start_time")
            if getattr(c, n) is not None and getattr(c, n).p_value < alpha
        ]
        row["explains_spread"] = ", ".join(found) if found else "nothing found"
        row["skipped"] = "; ".join(f"{k}: {v}" for k, v in sorted(c.skipped.items()))  # type: ignore[attr-defined]
        rows.append(row)
    return pd.DataFrame(rows)


def verdicts(frame: pd.DataFrame, alpha: float = ALPHA) -> list[str]:
    """One sentence per pairing: what explains its spread at level `alpha`, with the numbers."""
    out = []
    for row in frame.itertuples(index=False):
        found = []
        for name in ("node", "slot"):
            p = getattr(row, f"{name}_p")
            if not np.isnan(p) and p < alpha:
                found.append(
                    f"{name} ({getattr(row, f'{name}_share'):.0%} of the variance against "
                    f"{getattr(row, f'{name}_null_share'):.0%} by chance, p = {p:.3g})"
                )
        for name in ("run_order", "start_time"):
            p = getattr(row, f"{name}_p")
            if not np.isnan(p) and p < alpha:
                found.append(
                    f"{name.replace('_', ' ')} (rho = {getattr(row, f'{name}_rho'):.2f}, p = {p:.3g})"
                )
        if found:
            out.append(
                f"{row.pairing}: where or when a run ran explains part of the spread: {'; '.join(found)}."
            )
        else:
            out.append(
                f"{row.pairing}: no check found that where or when a run ran explains the spread (p >= {alpha})."
            )
    return out


def placement_table(prep: Prepared) -> tuple[pd.DataFrame, str]:
    """The placement checks of a study's runs, and what was checked (the outcome or the score)."""
    from orchestrator.stats import placement_checks

    runs = prep.runs
    if present(runs, "outcome"):
        df, value = runs[runs["outcome"].notna()], "outcome"
    else:
        df = runs[(runs["compliant"] == 1.0) & runs["score"].notna()]
        value = prep.score_column or "score"
    values = df["outcome"] if value == "outcome" else df["score"]

    def column(name: str) -> list[object] | None:
        if not present(df, name):
            return None
        return [None if pd.isna(v) else v for v in df[name].tolist()]

    checks = placement_checks(
        df["pairing"].to_numpy(dtype=object),
        values.to_numpy(dtype=float),
        nodes=column("node"),
        slots=column("slot"),
        run_order=column("run_order"),
        started_at=column("started_at"),
        tasks=df["task"].to_numpy(dtype=object),
        n_resamples=N_RESAMPLES,
        seed=prep.seed_for("placement"),
    )
    return checks_frame(checks), value
