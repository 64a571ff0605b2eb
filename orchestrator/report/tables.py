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
    Exclusion,
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
                comp, n_resamples=n_resamples, seed=prep.seed_for("pairing", p), confidence=confidence,
                higher_is_better=prep.higher_is_better,
            )
            row.update(mean=s.mean, median=s.median, sd=s.sd, ci_low=s.low, ci_high=s.high, best=s.best)
        else:
            row.update(mean=np.nan, median=np.nan, sd=np.nan, ci_low=np.nan, ci_high=np.nan, best=np.nan)
        row["all_run_mean"] = float(df.loc[scored, "score"].mean()) if scored.any() else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def run_gaps_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing and pooled: how far apart two runs of one pairing land, over all scored runs and over
    compliant runs (the distribution of |x_i - x_j| over every pair of distinct runs)."""
    from orchestrator.stats import run_gaps

    rows = []
    for runs_label, mask in (("all scored", prep.runs["score"].notna()), ("compliant", prep.runs["compliant_scored"])):
        df = prep.runs[mask]
        for p in [*prep.pairings, "all"]:
            sub = df if p == "all" else df[df["pairing"] == p]
            if len(sub) < 2 or sub["pairing"].value_counts().max() < 2:  # no pairing with two runs: no gap
                continue
            g = run_gaps(sub["pairing"].to_numpy(object), sub["score"].to_numpy(float))
            rows.append({"runs": runs_label, "pairing": p, "pairs": g.pairs, "mean_gap": g.mean,
                         "median_gap": g.median, "p90_gap": g.p90})
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
                # any other verdict word: never clear, counted apart
                row[f"{rule}_other"] = int((df[rule].notna()
                                            & ~df[rule].isin(("flagged", "clear", "unanalysable"))).sum())
                row[f"{rule}_blank"] = int(df[rule].isna().sum())
        # compliant = passed the applied rules AND scored: the count every score table uses; a run whose
        # code could not be scored is a failed attempt whatever its audit said (counted in unscorable)
        row["compliant"] = int(df["compliant_scored"].sum())
        row["unscorable"] = int(((df["compliant"] == 1.0) & df["score"].isna()).sum())
        row["excluded"] = int((df["compliant"] == 0.0).sum())
        row["unknown"] = int(df["compliant"].isna().sum())
        rows.append(row)
    return pd.DataFrame(rows)


def exclusion_sensitivity_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing and exclusion rule: compliant runs, mean, 5th percentile, median and best score."""
    rows = []
    blank = pd.Series([None] * len(prep.runs), index=prep.runs.index, dtype=object)
    for rule in Exclusion:
        never = [r for r in rule.rules if not present(prep.runs, r)]
        if never:  # a rule nobody audited excludes nobody and clears nobody: say so, never "0 compliant"
            rows += [
                {"exclusion": rule.value, "pairing": p, "compliant": np.nan, "mean": np.nan, "p05": np.nan,
                 "median": np.nan, "best": np.nan, "note": f"not audited: {', '.join(never)}"}
                for p in prep.pairings
            ]
            continue
        comp = compliant(
            prep.runs.get("eval_labels_in_fit", blank).to_numpy(),
            prep.runs.get("frame_statistics", blank).to_numpy(),
            rule,
            prep.runs.get("eval_features_in_fit", blank).to_numpy(),
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
                    "best": prep.best(s),
                    "note": "",
                }
            )
    return pd.DataFrame(rows)


def spread_table(prep: Prepared, *, value_column: str = "score") -> pd.DataFrame:
    """One row: how far apart pairing means are, against the median run-to-run SD."""
    groups = [
        g
        for g in (
            prep.of(p).loc[prep.of(p)["compliant_scored"], value_column].dropna().to_numpy(float)
            for p in prep.pairings
        )
        if g.size >= 2
    ]
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


def runs_needed_table(prep: Prepared, *, n_sims: int = 50_000) -> pd.DataFrame:
    """Per pair of pairings: the observed gap, runs per arm to detect it, how often r runs misorder them."""
    scores = {p: _compliant_scores(prep.of(p)) for p in prep.pairings}
    with_sd = [s for s in scores.values() if s.size >= 2]
    median_sd = float(np.median([s.std(ddof=1) for s in with_sd])) if with_sd else np.nan
    ref_sd, ref_model = _reference_model_sd(prep, scores)
    rows = []
    for a, b in combinations([p for p in prep.pairings if scores[p].size >= 2], 2):
        sa, sb = scores[a], scores[b]
        # stronger in the metric's direction (the lower mean RMSE); the draws below are signed the same way
        stronger, weaker = (a, b) if prep.sign * sa.mean() >= prep.sign * sb.mean() else (b, a)
        gap = abs(sa.mean() - sb.mean())
        sd = math.sqrt((sa.var(ddof=1) + sb.var(ddof=1)) / 2)
        need = runs_per_arm(sd, gap)
        row: dict[str, object] = {
            "stronger": stronger,
            "weaker": weaker,
            "gap": gap,
            "pooled_sd": sd,
            "runs_per_arm": math.ceil(need) if math.isfinite(need) else np.inf,
            # the paper's convention: one run-to-run SD for every contrast, the median pairing SD
            "median_pairing_sd": median_sd,
            "runs_per_arm_at_median_sd": runs_per_arm(median_sd, gap) if gap > 0 else np.inf,
            # and the reference study's Table 9: the median SD of the reference model's pairings
            "reference_model_sd": ref_sd,
            "gap_in_reference_model_sds": gap / ref_sd if ref_sd > 0 else np.nan,
            "runs_per_arm_at_reference_model_sd": runs_per_arm(ref_sd, gap) if gap > 0 and ref_sd > 0 else np.nan,
            "runs_now": int(min(sa.size, sb.size)),
        }
        for r in WRONG_ORDER_RS:
            w = wrong_order_probability(
                prep.sign * scores[weaker], prep.sign * scores[stronger], r, n_sims=n_sims,
                seed=prep.seed_for("wrong_order", a, b, r),
            )
            row[f"p_weaker_ahead_r{r}"] = w.p_wrong + w.p_tie / 2
        rows.append(row)
    return pd.DataFrame(rows)


def within_rank_table(
    prep: Prepared, x: str, y: str, *, name: str, subsets: dict[str, pd.Series] | None = None, n_resamples: int = 2_000
) -> pd.DataFrame:
    """Per subset of runs: the rank correlation of x with y, runs ranked within their pairing and pooled,
    with a bootstrap interval (runs resampled within pairings) and a permutation p (y shuffled within)."""
    from orchestrator.stats import pooled_rank_correlation

    subsets = subsets or {"compliant runs": prep.runs["compliant_scored"]}
    rows = []
    for label, mask in subsets.items():
        df = prep.runs[mask & prep.runs[x].notna() & prep.runs[y].notna()]
        row: dict[str, object] = {"subset": label}
        try:
            rc = pooled_rank_correlation(
                df["pairing"].to_numpy(object), df[x].to_numpy(float), df[y].to_numpy(float),
                n_resamples=n_resamples, seed=prep.seed_for("within_rank", name, label),
            )
            row.update(runs=rc.n, pairings=rc.groups, rho=rc.rho, ci_low=rc.low, ci_high=rc.high,
                       p_value=rc.p_value, note="")
        except ValueError as exc:
            row.update(runs=len(df), pairings=np.nan, rho=np.nan, ci_low=np.nan, ci_high=np.nan,
                       p_value=np.nan, note=str(exc))
        rows.append(row)
    return pd.DataFrame(rows)


def budget_use(prep: Prepared) -> pd.Series:
    """Each run's share of its budget: metered CPU-seconds over the run's budget column, else the study's."""
    budget = prep.runs["budget_cpu_seconds"] if "budget_cpu_seconds" in prep.runs else pd.Series(np.nan, index=prep.runs.index)
    if prep.settings.budget_cpu_seconds is not None:
        budget = budget.fillna(prep.settings.budget_cpu_seconds)
    return prep.runs["cpu_seconds_metered"] / budget


def budget_pooled_table(prep: Prepared) -> pd.DataFrame:
    """Budget use against score, runs ranked within their pairing and pooled: all scored runs, compliant
    runs, and compliant runs above a quarter, half and three quarters of the budget (when a budget is known)."""
    scored = prep.runs["score"].notna()
    subsets = {"all scored runs": scored, "compliant runs": prep.runs["compliant_scored"]}
    use = budget_use(prep)
    if use.notna().any():
        for share, label in ((0.25, "a quarter"), (0.5, "half"), (0.75, "three quarters")):
            subsets[f"compliant, above {label} of the budget"] = prep.runs["compliant_scored"] & (use > share)
    return within_rank_table(prep, "cpu_seconds_metered", "score", name="budget", subsets=subsets)


def _reference_model_sd(prep: Prepared, scores: dict[str, np.ndarray]) -> tuple[float, str | None]:
    """The median run-to-run SD of the reference model's pairings (NaN without a model column)."""
    if "model" not in prep.runs or not prep.runs["model"].notna().any():
        return float("nan"), None
    ref = prep.levels("model")[0]
    members = prep.runs.loc[prep.runs["model"].astype(str) == ref, "pairing"].unique()
    sds = [scores[p].std(ddof=1) for p in members if p in scores and scores[p].size >= 2]
    return (float(np.median(sds)) if sds else float("nan")), ref


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


def interaction_table(
    prep: Prepared, *, n_resamples: int = 5_000, value_column: str = "score"
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every pair of agents: the change in one minus the change in the other when the model moves away from
    the reference model, in one Holm family; and the joint Wald test of no interaction."""
    df = prep.runs[(prep.runs["compliant"] == 1.0) & prep.runs[value_column].notna()]
    cells = {
        (str(a), str(m)): g[value_column].to_numpy(float)
        for (a, m), g in df.groupby(["agent", "model"], sort=True)
    }
    res = interaction_contrasts(
        cells,
        n_resamples=n_resamples,
        seed=prep.seed_for("interaction", value_column),
        rows=[a for a in prep.levels("agent") if any(k[0] == a for k in cells)],
        cols=[m for m in prep.levels("model") if any(k[1] == m for k in cells)],
        pairwise=True,
    )
    contrasts = pd.DataFrame(
        [
            {
                "agent": c.row,
                "against": c.against,
                "model": c.col,
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
    """Per pairing and over all: the compliant runs' mean, SD and gain over the starting code in each period.

    The later period's difficulty differs (the starting code may score higher or lower there), so the raw
    "later minus now" mixes that difference with the loss of gain; the gain over the starting code in each
    period, and the share of it kept, do not. Without the two baselines only the means and SDs are given.
    """
    base_now, base_later = prep.baseline(), prep.baseline("later_score")
    groups = [(p, prep.of(p)) for p in prep.pairings] + [("all", prep.runs)]
    rows = []
    for p, df in groups:
        df = df[df["compliant_scored"] & df["later_score"].notna()]
        now, later = df["score"], df["later_score"]
        row: dict[str, object] = {
            "pairing": p,
            "runs": len(df),
            "mean_score": now.mean() if len(df) else np.nan,
            "mean_later": later.mean() if len(df) else np.nan,
            "sd_score": now.std(ddof=1) if len(df) > 1 else np.nan,
            "sd_later": later.std(ddof=1) if len(df) > 1 else np.nan,
        }
        if base_now is not None and base_later is not None:
            # gains are improvements in the metric's direction (a lower RMSE is a positive gain)
            gain_now, gain_later = prep.sign * (now.mean() - base_now), prep.sign * (later.mean() - base_later)
            row.update(
                gain_score=gain_now,
                gain_later=gain_later,
                share_of_gain_kept=gain_later / gain_now if len(df) and gain_now != 0 else np.nan,
                below_baseline_score=int(prep.worse_than(now, base_now).sum()),
                below_baseline_later=int(prep.worse_than(later, base_later).sum()),
            )
        rows.append(row)
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
