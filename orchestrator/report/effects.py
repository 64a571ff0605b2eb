"""Report tables for the reader's later questions: the starting code, which factors matter, compliance as
an outcome. One function per table; each takes the prepared runs and returns a DataFrame.

Factor levels come from `Prepared.levels` (the named reference level first, the rest sorted), never
from the order of the input's rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from orchestrator.report.prepare import Prepared
from orchestrator.stats import (
    fisher_exact_two_sided,
    mean_difference,
    runs_per_arm,
    wilson_interval,
    wrong_order_probability,
)


def _compliant(prep: Prepared, value_column: str) -> pd.DataFrame:
    runs = prep.runs
    return runs[runs["compliant_scored"] & runs[value_column].notna()]


def baseline_table(prep: Prepared) -> pd.DataFrame:
    """Per score column with a baseline: the starting code's score, the compliant runs' gain over it, the
    weakest compliant run's margin, and how many runs scored below it (compliant, and all scored runs)."""
    rows = []
    for column in ("score", "later_score"):
        name = prep.score_column if column == "score" else column
        base = prep.baseline(name)
        if base is None or name is None or column not in prep.runs or not prep.runs[column].notna().any():
            continue
        comp = _compliant(prep, column)
        scored = prep.runs[prep.runs[column].notna()]
        sds = comp.groupby("pairing")[column].std(ddof=1).dropna()
        gain = prep.sign * (comp[column].mean() - base)  # an improvement in the metric's direction
        ref_sd = np.nan
        if "model" in comp and comp["model"].notna().any():
            ref = prep.levels("model")[0]
            ref_sd = comp[comp["model"].astype(str) == ref].groupby("pairing")[column].std(ddof=1).median()
        rows.append(
            {
                "score": name,
                "baseline": base,
                "compliant_runs": len(comp),
                "mean": comp[column].mean(),
                "gain_over_baseline": gain,
                "gain_in_run_sds": gain / sds.median() if len(sds) else np.nan,
                "gain_in_reference_model_sds": gain / ref_sd if ref_sd and ref_sd > 0 else np.nan,
                "weakest_compliant_minus_baseline": prep.sign * (prep.worst(comp[column]) - base),
                "compliant_below_baseline": int(prep.worse_than(comp[column], base).sum()),
                "scored_runs": len(scored),
                "scored_below_baseline": int(prep.worse_than(scored[column], base).sum()),
                "noncompliant_below_baseline": int((prep.worse_than(scored[column], base)
                                                    & ~scored["compliant_scored"]).sum()),
            }
        )
    return pd.DataFrame(rows)


def _other_factors(prep: Prepared, factor: str) -> list[str]:
    return [f for f in prep.settings.factors if f != factor and f in prep.runs and prep.runs[f].notna().any()]


def factor_effects_table(prep: Prepared, *, value_column: str = "score", n_resamples: int = 20_000) -> pd.DataFrame:
    """Per factor and non-reference level: its gain over the reference level pooled over the other factors'
    levels (compliant runs; only the combinations run at both levels), with SE, z, bootstrap interval, the
    gain in run-to-run SDs (the median SD of the reference level's pairings), the runs per arm
    16 sd^2 / gain^2 needs, and how often one run of each puts the reference level ahead (averaged over
    the other factors' combinations, and pooled)."""
    comp = _compliant(prep, value_column)
    rows = []
    for factor in prep.settings.factors:
        if factor not in comp or comp[factor].nunique() < 2:
            continue
        levels = prep.levels(factor)
        ref = levels[0]
        others = _other_factors(prep, factor)
        for level in levels[1:]:
            rows += _factor_rows(prep, comp, factor, ref, level, others, value_column, n_resamples)
    return pd.DataFrame(rows)


def _factor_rows(
    prep: Prepared, comp: pd.DataFrame, factor: str, ref: str, level: str, others: list[str], value_column: str,
    n_resamples: int,
) -> list[dict[str, object]]:
    """The pooled row for one level against the reference, then (with one other factor) one row within each
    of that factor's levels (the change of each agent when the model changes, say)."""
    rows: list[dict[str, object]] = []
    scopes: list[tuple[str, pd.DataFrame]] = [("all", comp)]
    if len(others) == 1:
        scopes += [(f"{others[0]}={v}", comp[comp[others[0]].astype(str) == v]) for v in prep.levels(others[0])]
    for scope, data in scopes:
        pair = data[data[factor].astype(str).isin((ref, level))]
        if others:  # matched: only the other-factor combinations run at both levels
            combos = pair.groupby(others)[factor].nunique()
            both = combos[combos == 2].index
            pair = pair.set_index(others).loc[both].reset_index() if len(both) else pair.iloc[0:0]
        a = pair.loc[pair[factor].astype(str) == level, value_column].to_numpy(float)
        b = pair.loc[pair[factor].astype(str) == ref, value_column].to_numpy(float)
        if a.size < 2 or b.size < 2:
            continue
        d = mean_difference(
            a, b, n_resamples=n_resamples, seed=prep.seed_for("factor", factor, level, value_column, scope)
        )
        ref_runs = pair[pair[factor].astype(str) == ref]
        sd = float(ref_runs.groupby("pairing")[value_column].std(ddof=1).median())
        reversals = []
        for _, cell in (pair.groupby(others) if others else [((), pair)]):
            # signed so that "ahead" is better in the metric's direction (a lower RMSE is ahead)
            hi = prep.sign * cell.loc[cell[factor].astype(str) == level, value_column].to_numpy(float)
            lo = prep.sign * cell.loc[cell[factor].astype(str) == ref, value_column].to_numpy(float)
            w = wrong_order_probability(lo, hi, 1, seed=0)  # exact at r = 1: the seed is never drawn on
            reversals.append(w.p_wrong + w.p_tie / 2)
        pooled = wrong_order_probability(prep.sign * b, prep.sign * a, 1, seed=0)
        # the gain is the level's improvement over the reference in the metric's direction
        gain, ci = prep.sign * d.estimate, sorted((prep.sign * d.low, prep.sign * d.high))
        rows.append(
            {
                "factor": factor,
                "level": level,
                "reference": ref,
                "within": scope,
                "runs_level": d.n_a,
                "runs_reference": d.n_b,
                "mean_level": d.mean_a,
                "mean_reference": d.mean_b,
                "gain": gain,
                "se": d.se,
                "in_ses": prep.sign * d.z,
                "p_value": d.p_value,
                "ci_low": ci[0],
                "ci_high": ci[1],
                "reference_run_sd": sd,
                "gain_in_run_sds": gain / sd if sd > 0 else np.nan,
                "runs_per_arm": float(np.ceil(runs_per_arm(sd, abs(d.estimate)))) if d.estimate else np.inf,
                "p_reference_ahead_one_run": float(np.mean(reversals)),
                "p_reference_ahead_one_run_pooled": pooled.p_wrong + pooled.p_tie / 2,
                "matched_over": ", ".join(others) if others else "",
            }
        )
    return rows


def yield_table(prep: Prepared, *, confidence: float = 0.95) -> pd.DataFrame:
    """Per pairing, per factor level and over all: the share of counted runs that were compliant and scored
    (an unscorable run is a failed attempt), with its Wilson interval."""
    runs = prep.runs
    groups: list[tuple[str, str, pd.DataFrame]] = [("pairing", p, prep.of(p)) for p in prep.pairings]
    for factor in prep.settings.factors:
        if factor in runs and runs[factor].notna().any():
            groups += [(factor, lv, runs[runs[factor].astype(str) == lv]) for lv in prep.levels(factor)]
    groups.append(("all", "all", runs))
    rows = []
    for by, level, df in groups:
        n, x = len(df), int(df["compliant_scored"].sum())
        lo, hi = wilson_interval(x, n, confidence=confidence) if n else (np.nan, np.nan)
        rows.append(
            {
                "by": by,
                "level": level,
                "runs": n,
                "compliant": x,
                "yield": x / n if n else np.nan,
                "wilson_low": float(lo),
                "wilson_high": float(hi),
                "excluded": int((df["compliant"] == 0.0).sum()),
                "unscorable": int(((df["compliant"] == 1.0) & df["score"].isna()).sum()),
                "unknown": int(df["compliant"].isna().sum()),
            }
        )
    return pd.DataFrame(rows)


def yield_tests_table(prep: Prepared) -> pd.DataFrame:
    """Per factor and non-reference level: does its yield differ from the reference level's? Fisher's exact
    test (two-sided) on compliant-and-scored against not."""
    runs = prep.runs
    rows = []
    for factor in prep.settings.factors:
        if factor not in runs or runs[factor].nunique() < 2:
            continue
        levels = prep.levels(factor)
        ref = runs[runs[factor].astype(str) == levels[0]]
        a_ok, a_n = int(ref["compliant_scored"].sum()), len(ref)
        for level in levels[1:]:
            df = runs[runs[factor].astype(str) == level]
            b_ok, b_n = int(df["compliant_scored"].sum()), len(df)
            rows.append(
                {
                    "factor": factor,
                    "level": level,
                    "reference": levels[0],
                    "yield_level": b_ok / b_n,
                    "yield_reference": a_ok / a_n,
                    "failures_level": b_n - b_ok,
                    "failures_reference": a_n - a_ok,
                    "fisher_p": fisher_exact_two_sided(b_ok, b_n - b_ok, a_ok, a_n - a_ok),
                }
            )
    return pd.DataFrame(rows)


def top_runs_table(prep: Prepared) -> pd.DataFrame:
    """Among the N highest scores (every scored run, rule-breakers included), how many broke an applied rule,
    on each score column; and the best score before and after excluding them."""
    n = prep.settings.top_n
    scopes: list[tuple[str, pd.DataFrame]] = [("all", prep.runs)]
    for factor in prep.settings.factors:
        if factor in prep.runs and prep.runs[factor].nunique() > 1:
            scopes += [(f"{factor}={lv}", prep.runs[prep.runs[factor].astype(str) == lv]) for lv in prep.levels(factor)]
    rows = []
    for (scope, runs), column in ((sc, c) for sc in scopes for c in ("score", "later_score")):
        if column not in runs or not runs[column].notna().any():
            continue
        scored = runs[runs[column].notna()]
        top = prep.top(scored, column, n)
        comp = scored[scored["compliant_scored"]]
        rows.append(
            {
                "runs": scope,
                "score": prep.score_column if column == "score" else column,
                "top_n": len(top),
                "rule_breakers": int((top["compliant"] == 0.0).sum()),
                "unknown_compliance": int(top["compliant"].isna().sum()),
                "rule_breakers_in_scored": int((scored["compliant"] == 0.0).sum()),
                "scored_runs": len(scored),
                "best": prep.best(scored[column]),
                "best_compliant": prep.best(comp[column]),
                "noncompliant_min": scored.loc[scored["compliant"] == 0.0, column].min(),
                "noncompliant_max": scored.loc[scored["compliant"] == 0.0, column].max(),
            }
        )
    return pd.DataFrame(rows)


def highest_runs_table(prep: Prepared) -> pd.DataFrame:
    """The N highest-scoring runs themselves (in the metric's direction), with the id a reader opens them by
    (`sbx view`'s /run/ID, `sbx show ID`; `run` the short one, `run_id` the full one) and which rules each broke. Empty without run ids (a runs table
    written by hand)."""
    from orchestrator.ledger.fields import short_run_id
    from orchestrator.run.record import RULE_COLUMNS

    if "run_id" not in prep.runs or not prep.runs["score"].notna().any():
        return pd.DataFrame()
    scored = prep.runs[prep.runs["score"].notna()]
    top = prep.top(scored, "score", prep.settings.top_n)
    rules = [r for r in RULE_COLUMNS if r in top]
    return pd.DataFrame({
        "run": [short_run_id(str(r)) for r in top["run_id"]],
        "pairing": top["pairing"].tolist(), "task": top["task"].tolist(),
        "score": top["score"].tolist(),
        "compliant": ["unknown" if pd.isna(c) else ("yes" if c else "no") for c in top["compliant"]],
        "flagged_by": [", ".join(r for r in rules if row[r] == "flagged") or "-" for _, row in top.iterrows()],
        "run_id": [str(r) for r in top["run_id"]],  # the full id: the CSV's, and the HTML's link (not shown)
    })


def selection_table(prep: Prepared) -> pd.DataFrame:
    """Does choosing on the eval score pick what the holdout would? Per pairing and pooled: the rank
    correlation of eval and holdout scores within pairings (compliant runs), and the oracle's regret, the
    mean kept holdout score of an oracle choosing on the holdout minus the policy's, per k."""
    from orchestrator.report.keep_tables import pooled_best_of_k_frame
    from orchestrator.report.tables import within_rank_table

    if "eval_score" not in prep.runs or prep.score_column != "holdout_score":
        return pd.DataFrame()
    comp = prep.runs["compliant_scored"]
    subsets = {"all pairings": comp}
    for factor in prep.settings.factors:
        if factor in prep.runs and prep.runs[factor].nunique() > 1:
            subsets |= {f"{factor}={lv}": comp & (prep.runs[factor].astype(str) == lv) for lv in prep.levels(factor)}
    subsets |= {p: comp & (prep.runs["pairing"] == p) for p in prep.pairings}
    frame = within_rank_table(prep, "eval_score", "score", name="selection", subsets=subsets)
    pooled = pooled_best_of_k_frame(prep, n_resamples=1)  # point estimates only: the regret needs no interval
    pooled = pooled[pooled["factor"] == "all"]
    for _, r in pooled.iterrows():
        frame.loc[frame["subset"] == "all pairings", f"oracle_regret_k{int(r['k'])}"] = (
            prep.sign * (r["oracle_mean_kept"] - r["mean_kept"])
        )
    return frame
