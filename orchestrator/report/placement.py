"""Where and when runs ran: does the node, the slot, the run order or the start time explain the spread?

Per pairing, the scores of compliant runs (or the pass/fail outcomes of all runs) are centred within task
and checked against node and slot (one-way ANOVA F with a permutation p-value, and the share of variance
beside the share random grouping gives) and against run order and start time (Spearman's rho with a
permutation p-value), by `orchestrator.stats.placement_checks`. The same checks run in `sbx report` for
every study and in the divergence report for each arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from orchestrator.report.prepare import Prepared
from orchestrator.report.runs_table import present

if TYPE_CHECKING:  # orchestrator.stats loads scipy; the report imports it only when it computes the checks
    from orchestrator.stats.placement import PlacementCheck

#: the runs-table columns the checks read, by check
PLACEMENT_COLUMNS = {"node": "node", "slot": "slot", "run_order": "run_order", "start_time": "started_at"}
ALPHA = 0.05
N_RESAMPLES = 10_000


def checks_frame(checks: Sequence[PlacementCheck], alpha: float = ALPHA) -> pd.DataFrame:
    """One row per pairing (PlacementCheck): each check's statistic, share or rho, p-value, or why it was skipped."""
    rows = []
    for c in checks:
        row: dict[str, object] = {"pairing": c.pairing, "runs": c.runs, "dropped": c.dropped}
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
        row["skipped"] = "; ".join(f"{k}: {v}" for k, v in sorted(c.skipped.items()))
        rows.append(row)
    frame = pd.DataFrame(rows)
    return _adjust(frame, alpha) if len(frame) else frame


_CHECKS = ("node", "slot", "run_order", "start_time")


def _adjust(frame: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Holm-adjust every p-value of the table as one family: a report runs up to four checks per pairing,
    and at 5% each, chance alone finds something in most reports of several pairings."""
    from orchestrator.stats import holm_adjust

    cells = [(i, n) for i in range(len(frame)) for n in _CHECKS if not np.isnan(frame[f"{n}_p"].iloc[i])]
    adjusted = holm_adjust([frame[f"{n}_p"].iloc[i] for i, n in cells]) if cells else []
    for n in _CHECKS:
        frame[f"{n}_p_holm"] = np.nan
    for (i, n), p in zip(cells, adjusted, strict=True):
        frame.loc[frame.index[i], f"{n}_p_holm"] = p
    frame["explains_spread"] = [
        ", ".join(n for n in _CHECKS if frame[f"{n}_p_holm"].iloc[i] < alpha) or "nothing found"
        for i in range(len(frame))
    ]
    frame.attrs["tests"] = len(cells)
    return frame


def verdicts(frame: pd.DataFrame, alpha: float = ALPHA) -> list[str]:
    """One sentence per pairing: what explains its spread at level `alpha`, with the numbers."""
    tests = int(frame.attrs.get("tests", 0)) if len(frame) else 0
    out = [
        f"{tests} tests in this table, Holm-adjusted as one family: a check explains part of a pairing's "
        f"spread only when its adjusted p (the _p_holm columns) is below {alpha}; the unadjusted p is beside it."
    ] if tests else []
    for row in frame.itertuples(index=False):
        found = []
        for name in ("node", "slot"):
            p, q = getattr(row, f"{name}_p"), getattr(row, f"{name}_p_holm")
            if not np.isnan(q) and q < alpha:
                found.append(
                    f"{name} ({getattr(row, f'{name}_share'):.0%} of the variance against "
                    f"{getattr(row, f'{name}_null_share'):.0%} by chance, p = {p:.3g}, Holm p = {q:.3g})"
                )
        for name in ("run_order", "start_time"):
            p, q = getattr(row, f"{name}_p"), getattr(row, f"{name}_p_holm")
            if not np.isnan(q) and q < alpha:
                found.append(
                    f"{name.replace('_', ' ')} (rho = {getattr(row, f'{name}_rho'):.2f}, p = {p:.3g}, "
                    f"Holm p = {q:.3g})"
                )
        if found:
            out.append(
                f"{row.pairing}: where or when a run ran explains part of the spread: {'; '.join(found)}."
            )
        else:
            out.append(
                f"{row.pairing}: no check found that where or when a run ran explains the spread "
                f"(Holm-adjusted p >= {alpha})."
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


def drift_table(prep: Prepared) -> pd.DataFrame:
    """Per arm (each factor level, and each pairing): compliant scores of the first half of its runs, in
    the order they started (run order without start times), against the second half."""
    from orchestrator.stats import halves

    key = "started_at" if present(prep.runs, "started_at") else "run_order"
    runs = prep.runs[prep.runs["compliant_scored"] & prep.runs[key].notna()]
    arms: list[tuple[str, pd.DataFrame]] = []
    for factor in prep.settings.factors:
        if factor in runs and runs[factor].nunique() > 1:
            arms += [(f"{factor}={lv}", runs[runs[factor].astype(str) == lv]) for lv in prep.levels(factor)]
    arms += [(p, runs[runs["pairing"] == p]) for p in prep.pairings]
    rows = []
    for arm, df in arms:
        try:
            h = halves(df[key].to_numpy(float), df["score"].to_numpy(float), seed=prep.seed_for("drift", arm))
        except ValueError:
            continue
        d = h.difference
        rows.append({"arm": arm, "ordered_by": key, "first_runs": h.first_runs, "second_runs": h.second_runs,
                     "first_mean": h.first_mean, "second_mean": h.second_mean, "second_minus_first": d.estimate,
                     "se": d.se, "p_value": d.p_value, "ci_low": d.low, "ci_high": d.high})
    return pd.DataFrame(rows)


def pooled_node_table(prep: Prepared) -> pd.DataFrame:
    """Over all pairings at once: how much of the compliant scores' spread, centred within each pairing (and
    task), lies between nodes and between slots, beside what random grouping gives."""
    from orchestrator.stats import group_share

    runs = prep.runs[prep.runs["compliant_scored"]]
    centred = runs["score"] - runs.groupby(["pairing", "task"])["score"].transform("mean")
    rows = []
    for name in ("node", "slot"):
        if not present(runs, name):
            continue
        ok = runs[name].notna()
        if runs.loc[ok, name].nunique() < 2:
            continue
        g = group_share(runs.loc[ok, name].astype(str).to_numpy(object), centred[ok].to_numpy(float),
                        n_resamples=N_RESAMPLES, seed=prep.seed_for("pooled_placement", name))
        rows.append({"check": name, "runs": int(ok.sum()), "groups": g.groups, "f": g.f, "share": g.share,
                     "null_share": g.null_mean_share, "p_value": g.p_value})
    return pd.DataFrame(rows)
