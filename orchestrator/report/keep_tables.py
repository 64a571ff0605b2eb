"""Report tables for keeping the best compliant of k attempts: per pairing, pooled, and under each
exclusion rule. Each function takes the prepared runs and returns a DataFrame."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from orchestrator.report.prepare import Prepared
from orchestrator.report.runs_table import present
from orchestrator.stats import DEFAULT_KS, Exclusion, compliant, spread_against_noise
from orchestrator.stats.pooled_keep_best import PooledBestOfKRow, pooled_best_of_k


def _keep_inputs(prep: Prepared, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Best-of-k attempts of one pairing: (rank score, value, keepable, attempts dropped as unknown)."""
    rank_col = "eval_score" if present(prep.runs, "eval_score") else "score"
    rank = df[rank_col].to_numpy(dtype=float)
    value = df["score"].to_numpy(dtype=float)
    artifact = ~(np.isnan(rank) | np.isnan(value))
    unknown = artifact & df["compliant"].isna().to_numpy()
    keepable = artifact & (df["compliant"] == 1.0).to_numpy()
    attempts = ~unknown
    return rank[attempts], value[attempts], keepable[attempts], int(unknown.sum())


def best_of_k_frame(
    prep: Prepared, *, ks: tuple[int, ...] = DEFAULT_KS, n_resamples: int = 2_000, confidence: float = 0.95
) -> pd.DataFrame:
    """Per pairing and k: chance of a compliant attempt, kept median and 5th/95th percentile, the gain in the
    median (beside the median columns) and, named apart, the gain in the mean; the oracle's median and mean."""
    rows = []
    for p in prep.pairings:
        rank, value, keepable, unknown = _keep_inputs(prep, prep.of(p))
        if rank.size == 0:
            continue
        table = pooled_best_of_k(
            [(rank, value, keepable)],
            ks=ks,
            n_resamples=n_resamples,
            seed=prep.seed_for("best_of_k", p),
            confidence=confidence,
            higher_is_better=prep.higher_is_better,
        )
        rows += [
            {"pairing": p, "attempts": rank.size, "keepable": int(keepable.sum()), "unknown_dropped": unknown,
             **_best_of_k_columns(r)}
            for r in table
        ]
    return pd.DataFrame(rows)


def _best_of_k_columns(r: PooledBestOfKRow) -> dict[str, object]:
    return {
        "k": r.k,
        "p_any_compliant": r.p_any,
        "p_any_low": r.p_any_low,
        "p_any_wilson_low": r.p_any_wilson_low,
        "p_any_wilson_high": r.p_any_wilson_high,
        "median_kept": r.median_kept,
        "p05_kept": r.p05_kept,
        "p95_kept": r.p95_kept,
        "gain_median": r.gain_median,
        "gain_median_low": r.gain_median_low,
        "gain_median_high": r.gain_median_high,
        "mean_kept": r.mean_kept,
        "gain_mean": r.gain_mean,
        "gain_mean_low": r.gain_mean_low,
        "gain_mean_high": r.gain_mean_high,
        "oracle_median_kept": r.oracle_median_kept,
        "oracle_mean_kept": r.oracle_mean_kept,
    }


def pooled_best_of_k_frame(
    prep: Prepared,
    *,
    ks: tuple[int, ...] = DEFAULT_KS,
    n_resamples: int = 2_000,
    confidence: float = 0.95,
    value_column: str = "score",
) -> pd.DataFrame:
    """Best compliant of k pooled over pairings weighted equally: all pairings, then each level of each
    factor (the paper's Tables 6 and 8). `value_column` values the kept artifact (later_score: on later data)."""
    groups: list[tuple[str, str, list[str]]] = [("all", "all pairings", list(prep.pairings))]
    for factor in prep.settings.factors:
        if factor in prep.runs and prep.runs[factor].notna().any():
            for level in prep.levels(factor):
                members = sorted(prep.runs.loc[prep.runs[factor].astype(str) == level, "pairing"].unique())
                groups.append((factor, level, members))
    rows = []
    for factor, level, members in groups:
        inputs = []
        for p in members:
            df = prep.of(p)
            if value_column != "score":
                df = df.assign(score=df[value_column])
            rank, value, keepable, _ = _keep_inputs(prep, df)
            if rank.size:
                inputs.append((rank, value, keepable))
        if not inputs:
            continue
        table = pooled_best_of_k(
            inputs, ks=ks, n_resamples=n_resamples, seed=prep.seed_for("pooled_best_of_k", factor, level,
                                                                       value_column), confidence=confidence,
            higher_is_better=prep.higher_is_better,
        )
        rows += [{"factor": factor, "level": level, "pairings": len(inputs), **_best_of_k_columns(r)} for r in table]
    return pd.DataFrame(rows)


def exclusion_summary_table(prep: Prepared, *, n_resamples: int = 1) -> pd.DataFrame:
    """Per exclusion rule, over all pairings: runs kept, spread of pairing means, median pairing SD, best
    score, and the pooled best-of-3 and best-of-10 medians (the policy rejecting what the rule excludes;
    point estimates, so one resample: the intervals are in the best-of-k tables)."""
    blank = pd.Series([None] * len(prep.runs), index=prep.runs.index, dtype=object)
    rows = []
    for rule in Exclusion:
        never = [r for r in rule.rules if not present(prep.runs, r)]
        if never:
            rows.append({"exclusion": rule.value, "note": f"not audited: {', '.join(never)}"})
            continue
        comp = compliant(
            prep.runs.get("eval_labels_in_fit", blank).to_numpy(),
            prep.runs.get("frame_statistics", blank).to_numpy(),
            rule,
            prep.runs.get("eval_features_in_fit", blank).to_numpy(),
        )
        runs = prep.runs.assign(compliant=comp)
        runs["compliant_scored"] = (runs["compliant"] == 1.0) & runs["score"].notna()
        view = replace(prep, runs=runs)
        kept = runs[runs["compliant_scored"]]
        groups = [g["score"].to_numpy(float) for _, g in kept.groupby("pairing") if len(g) >= 2]
        spread = spread_against_noise(groups) if len(groups) >= 2 else None
        inputs = [_keep_inputs(view, view.of(p))[:3] for p in prep.pairings]
        best = pooled_best_of_k([i for i in inputs if i[0].size], ks=(3, 10), n_resamples=n_resamples,
                                seed=prep.seed_for("exclusion_summary", rule.value),
                                higher_is_better=prep.higher_is_better)
        rows.append(
            {
                "exclusion": rule.value,
                "runs": len(kept),
                "spread_of_means": spread.range_of_means if spread else np.nan,
                "median_run_sd": spread.median_run_sd if spread else np.nan,
                "best": prep.best(kept["score"]),
                "best_of_3_median": best[0].median_kept,
                "best_of_10_median": best[1].median_kept,
                "note": "",
            }
        )
    return pd.DataFrame(rows)
