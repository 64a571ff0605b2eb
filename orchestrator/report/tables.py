"""Report tables for scored runs (continuous outcomes such as a holdout AUC), one function per table.

Every function takes the prepared runs and returns a pandas DataFrame with plain column names; the
CSV files hold these frames at full precision.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd

from orchestrator.report.prepare import Prepared
from orchestrator.report.runs_table import present
from orchestrator.stats import (
    DEFAULT_KS,
    Exclusion,
    best_of_k_table,
    compliant,
    hanley_mcneil_se,
    interaction_contrasts,
    rank_correlation,
    runs_per_arm,
    spread_against_noise,
    summarize_runs,
    wrong_order_probability,
)
from orchestrator.stats.exclusion import ALL_RULES

WRONG_ORDER_RS = (1, 3, 10)


def _compliant_scores(df: pd.DataFrame) -> np.ndarray:
    keep = (df["compliant"] == 1.0) & df["score"].notna()
    return df.loc[keep, "score"].to_numpy(dtype=float)


def pairing_table(prep: Prepared, *, n_resamples: int = 10_000, confidence: float = 0.95) -> pd.DataFrame:
    """Per pairing: runs, compliant scored runs, mean, median, SD, mean interval, best, all-run mean.

    (One row per pairing, in study order.)
    """
    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        scored = df["score"].notna()
        comp = _compliant_scores(df)
        row: dict[str, object] = {
            "pairing": p,
            "runs": len(df),
            "scored": int(scored.sum()),
            "compliant": comp.size,
            "unknown_compliance": int((scored & df["compliant"].isna()).sum()),
        }
        if comp.size:
            s = summarize_runs(
                comp, n_resamples=n_resamples, seed=prep.seed_for("pairing", p), confidence=confidence
            )
            row.update(mean=s.mean, median=s.median, sd=s.sd, ci_low=s.low, ci_high=s.high, best=s.best)
        else:
            row.update(mean=np.nan, median=np.nan, sd=np.nan, ci_low=np.nan, ci_high=np.nan, best=np.nan)
        row["all_run_mean"] = float(df.loc[scored, "score"].mean()) if scored.any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def compliance_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: how runs ended, each rule's flagged/clear/blank counts, and who counts as compliant."""
    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        row: dict[str, object] = {"pairing": p, "runs": len(df), "scored": int(df["score"].notna().sum())}
        if "status" in df:
            row["failed"] = int((df["status"] == "failed").sum())
        if "failure_class" in df:
            for cls in ("infra", "agent", "unscorable"):
                row[f"failed_{cls}"] = int((df["failure_class"] == cls).sum())
        for rule in ("eval_labels_in_fit", "frame_statistics"):
            if rule in df:
                row[f"{rule}_flagged"] = int((df[rule] == "flagged").sum())
                row[f"{rule}_clear"] = int((df[rule] == "clear").sum())
                row[f"{rule}_unanalysable"] = int((df[rule] == "unanalysable").sum())
                row[f"{rule}_blank"] = int(df[rule].isna().sum())
        row["compliant"] = int((df["compliant"] == 1.0).sum())
        row["excluded"] = int((df["compliant"] == 0.0).sum())
        row["unknown"] = int(df["compliant"].isna().sum())
        rows.append(row)
    return pd.DataFrame(rows)


def exclusion_sensitivity_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing and exclusion rule: compliant runs, mean, 5th percentile, median and best score."""
    rows = []
    blank = pd.Series([None] * len(prep.runs), index=prep.runs.index, dtype=object)
    for rule in Exclusion:
        comp = compliant(
            prep.runs.get("eval_labels_in_fit", blank).to_numpy(),
            prep.runs.get("frame_statistics", blank).to_numpy(),
            rule,
        )
        df = prep.runs.assign(compliant=comp)
        for p in prep.pairings:
            s = _compliant_scores(df[df["pairing"] == p])
            rows.append(
                {
                    "exclusion": rule.value,
                    "pairing": p,
                    "compliant": s.size,
                    "mean": s.mean() if s.size else np.nan,
                    "p05": np.quantile(s, 0.05) if s.size else np.nan,
                    "median": np.median(s) if s.size else np.nan,
                    "best": s.max() if s.size else np.nan,
                }
            )
    return pd.DataFrame(rows)


def spread_table(prep: Prepared) -> pd.DataFrame:
    """One row: how far apart pairing means are, against the median run-to-run SD."""
    groups = [g for g in (_compliant_scores(prep.of(p)) for p in prep.pairings) if g.size >= 2]
    s = spread_against_noise(groups)
    return pd.DataFrame(
        [
            {
                "pairings": s.pairings,
                "range_of_means": s.range_of_means,
                "sd_of_means": s.sd_of_means,
                "median_run_sd": s.median_run_sd,
                "range_over_run_sd": s.ratio,
            }
        ]
    )


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
    """Per pairing and k: chance of a compliant attempt, kept median and 5th/95th percentile, gain, oracle."""
    rows = []
    for p in prep.pairings:
        rank, value, keepable, unknown = _keep_inputs(prep, prep.of(p))
        if rank.size == 0:
            continue
        table = best_of_k_table(
            rank,
            value,
            keepable,
            ks=ks,
            n_resamples=n_resamples,
            seed=prep.seed_for("best_of_k", p),
            confidence=confidence,
        )
        for r in table:
            rows.append(
                {
                    "pairing": p,
                    "k": r.k,
                    "attempts": rank.size,
                    "keepable": int(keepable.sum()),
                    "unknown_dropped": unknown,
                    "p_any_compliant": r.p_any,
                    "median_kept": r.median_kept,
                    "p05_kept": r.p05_kept,
                    "p95_kept": r.p95_kept,
                    "mean_kept": r.mean_kept,
                    "gain": r.gain,
                    "gain_low": r.gain_low,
                    "gain_high": r.gain_high,
                    "oracle_mean_kept": r.oracle_mean_kept,
                    "oracle_gain": r.oracle_gain,
                }
            )
    return pd.DataFrame(rows)


def runs_needed_table(prep: Prepared, *, n_sims: int = 50_000) -> pd.DataFrame:
    """Per pair of pairings: the observed gap, runs per arm to detect it, how often r runs misorder them."""
    scores = {p: _compliant_scores(prep.of(p)) for p in prep.pairings}
    rows = []
    for a, b in combinations([p for p in prep.pairings if scores[p].size >= 2], 2):
        sa, sb = scores[a], scores[b]
        stronger, weaker = (a, b) if sa.mean() >= sb.mean() else (b, a)
        gap = abs(sa.mean() - sb.mean())
        sd = math.sqrt((sa.var(ddof=1) + sb.var(ddof=1)) / 2)
        need = runs_per_arm(sd, gap)
        row: dict[str, object] = {
            "stronger": stronger,
            "weaker": weaker,
            "gap": gap,
            "pooled_sd": sd,
            "runs_per_arm": math.ceil(need) if math.isfinite(need) else np.inf,
            "runs_now": int(min(sa.size, sb.size)),
        }
        for r in WRONG_ORDER_RS:
            w = wrong_order_probability(
                scores[weaker], scores[stronger], r, n_sims=n_sims, seed=prep.seed_for("wrong_order", a, b, r)
            )
            row[f"p_weaker_ahead_r{r}"] = w.p_wrong + w.p_tie / 2
        rows.append(row)
    return pd.DataFrame(rows)


def budget_correlation_table(prep: Prepared, *, n_resamples: int = 10_000) -> pd.DataFrame:
    """Per pairing: Spearman correlation of CPU-seconds used with the score, and its permutation p-value."""
    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        df = df[df["compliant"] == 1.0]
        row: dict[str, object] = {"pairing": p}
        try:
            rc = rank_correlation(
                df["cpu_seconds_metered"].to_numpy(float),
                df["score"].to_numpy(float),
                n_resamples=n_resamples,
                seed=prep.seed_for("budget", p),
            )
            row.update(runs=rc.n, rho=rc.rho, p_value=rc.p_value, note="")
        except ValueError as exc:
            row.update(
                runs=int((df["cpu_seconds_metered"].notna() & df["score"].notna()).sum()),
                rho=np.nan,
                p_value=np.nan,
                note=str(exc),
            )
        rows.append(row)
    return pd.DataFrame(rows)


def interaction_table(prep: Prepared, *, n_resamples: int = 5_000) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Difference-in-differences contrasts over the agent x model grid, and the joint Wald test."""
    df = prep.runs[(prep.runs["compliant"] == 1.0) & prep.runs["score"].notna()]
    cells = {
        (str(a), str(m)): g["score"].to_numpy(float)
        for (a, m), g in df.groupby(["agent", "model"], sort=False)
    }
    res = interaction_contrasts(cells, n_resamples=n_resamples, seed=prep.seed_for("interaction"))
    contrasts = pd.DataFrame(
        [
            {
                "agent": c.row,
                "model": c.col,
                "reference_agent": res.reference_row,
                "reference_model": res.reference_col,
                "contrast": c.estimate,
                "se": c.se,
                "z": c.z,
                "p_value": c.p_value,
                "p_holm": c.p_holm,
                "boot_low": c.low,
                "boot_high": c.high,
            }
            for c in res.contrasts
        ]
    )
    wald = pd.DataFrame([{"statistic": res.wald.statistic, "df": res.wald.df, "p_value": res.wald.p_value}])
    return contrasts, wald


def later_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: the compliant runs' mean score now and on later-period data, and the change."""
    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        df = df[(df["compliant"] == 1.0) & df["score"].notna() & df["later_score"].notna()]
        rows.append(
            {
                "pairing": p,
                "runs": len(df),
                "mean_score": df["score"].mean() if len(df) else np.nan,
                "mean_later": df["later_score"].mean() if len(df) else np.nan,
                "mean_change": (df["later_score"] - df["score"]).mean() if len(df) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def scoring_noise_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: the AUC's Hanley-McNeil SE from the holdout size against the run-to-run SD."""
    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        df = df[
            (df["compliant"] == 1.0)
            & df["score"].notna()
            & df["holdout_positives"].notna()
            & df["holdout_negatives"].notna()
        ]
        if df.empty:
            continue
        se = hanley_mcneil_se(
            df["score"].clip(0, 1).to_numpy(float),
            df["holdout_positives"].to_numpy(float),
            df["holdout_negatives"].to_numpy(float),
        )
        sd = float(df["score"].std(ddof=1)) if len(df) > 1 else np.nan
        rows.append(
            {
                "pairing": p,
                "runs": len(df),
                "median_auc_se": float(np.median(se)),
                "run_sd": sd,
                "se_over_sd": float(np.median(se)) / sd if sd and sd > 0 else np.nan,
            }
        )
    return pd.DataFrame(rows)


def cost_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: spend, cost per scored and per compliant run, tokens and cached share, CPU-seconds, and
    cost per pass where outcomes exist. A run's spend counts whether or not it was scored (a failed or
    flagged attempt was paid for too), so cost per scored run = total spend / scored runs."""
    from orchestrator.stats import cost_per_solved_task

    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        row: dict[str, object] = {"pairing": p, "runs": len(df)}
        if "cost_usd" in df:
            total = df["cost_usd"].sum()
            scored = df["score"].notna()
            kept = scored & (df["compliant"] == 1.0)
            row.update(
                runs_with_cost=int(df["cost_usd"].notna().sum()),
                total_cost_usd=total,
                mean_cost_usd=df["cost_usd"].mean(),
                scored_runs=int(scored.sum()),
                cost_per_scored_run_usd=total / int(scored.sum()) if scored.any() else np.nan,
                compliant_runs=int(kept.sum()),
                cost_per_compliant_run_usd=total / int(kept.sum()) if kept.any() else np.nan,
            )
            if present(prep.runs, "outcome"):
                cps = cost_per_solved_task(df["cost_usd"].to_numpy(float), df["outcome"].to_numpy(float))
                row.update(passes=cps.solved, cost_per_pass_usd=cps.value)
        for col in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens", "model_calls"):
            if col in df:
                row[f"total_{col}"] = df[col].sum()
        if "input_tokens" in df and "cached_input_tokens" in df:
            both = df["input_tokens"].notna() & df["cached_input_tokens"].notna()
            total_in = df.loc[both, "input_tokens"].sum()
            row["cached_share"] = (
                df.loc[both, "cached_input_tokens"].sum() / total_in if total_in > 0 else np.nan
            )
        if "cpu_seconds_metered" in df:
            row["mean_cpu_seconds"] = df["cpu_seconds_metered"].mean()
        rows.append(row)
    return pd.DataFrame(rows)


#: the agent CLI's own usage report, beside the gateway's measurement of the same
SELF_REPORT_PAIRS = (("input_tokens", "reported_input_tokens"), ("output_tokens", "reported_output_tokens"),
                     ("model_calls", "reported_calls"), ("cost_usd", "reported_cost_usd"))


def self_report_gap_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: the CLI's self-reported usage against the gateway's, summed over the runs that have
    both, and the gap (reported - gateway) / gateway. The gateway's numbers are the ones sbx counts."""
    rows = []
    for p in prep.pairings:
        df = prep.of(p)
        row: dict[str, object] = {"pairing": p}
        for gateway, reported in SELF_REPORT_PAIRS:
            if gateway not in df or reported not in df:
                continue
            both = df[gateway].notna() & df[reported].notna()
            g, r = df.loc[both, gateway].sum(), df.loc[both, reported].sum()
            name = gateway.removesuffix("_usd").removesuffix("_tokens")
            row[f"runs_{name}"] = int(both.sum())
            row[f"gateway_{name}"] = g
            row[f"reported_{name}"] = r
            row[f"gap_{name}"] = (r - g) / g if both.any() and g > 0 else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def rule_versions_table(prep: Prepared) -> pd.DataFrame:
    """Per rule and version in force: verdicts, and after a re-audit how they moved from the version before.

    Reads `<rule>_version` and `<rule>_previous` (the ledger's export writes both); empty without them."""
    rows = []
    for rule in ALL_RULES:
        version_col, previous_col = f"{rule}_version", f"{rule}_previous"
        if rule not in prep.runs or version_col not in prep.runs:
            continue
        df = prep.runs[prep.runs[version_col].notna()]
        for version, group in df.groupby(version_col, sort=True):
            # a table without the previous-verdict column (a CSV made elsewhere) has no re-audits to show
            previous = group.get(previous_col, pd.Series(None, index=group.index, dtype=object))
            now = group[rule]
            rows.append({
                "rule": rule, "version": str(version), "runs": len(group),
                "flagged": int((now == "flagged").sum()), "clear": int((now == "clear").sum()),
                "unanalysable": int((now == "unanalysable").sum()),
                "re_audited": int(previous.notna().sum()),
                "flagged_to_clear": int(((previous == "flagged") & (now == "clear")).sum()),
                "clear_to_flagged": int(((previous == "clear") & (now == "flagged")).sum()),
            })
    return pd.DataFrame(rows)
