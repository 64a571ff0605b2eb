"""Report tables for pass/fail outcomes: pass rates with intervals, pass@k / pass^k, variance, pairs."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from orchestrator.report.prepare import Prepared
from orchestrator.report.runs_table import present
from orchestrator.stats import (
    clopper_pearson_interval,
    cohen_kappa,
    compare_by_task,
    discordant_pairs,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
    miller_task_count,
    score_per_repeat,
    sign_flip_test,
    task_bootstrap,
    variance_components,
    wilson_interval,
)


def _outcomes(prep: Prepared, pairing: str) -> pd.DataFrame:
    df = prep.of(pairing)
    return df[df["outcome"].notna()]


def pass_rate_table(prep: Prepared, *, n_resamples: int = 10_000) -> pd.DataFrame:
    """Per pairing: pass rate over runs, Wilson and Clopper-Pearson intervals, and a task-bootstrap range."""
    rows = []
    for p in prep.pairings:
        df = _outcomes(prep, p)
        n, x = len(df), int(df["outcome"].sum())
        row: dict[str, object] = {
            "pairing": p,
            "runs": n,
            "missing": len(prep.of(p)) - n,
            "passes": x,
            "tasks": df["task"].nunique(),
        }
        if n:
            wl, wh = wilson_interval(x, n)
            cl, ch = clopper_pearson_interval(x, n)
            boot = task_bootstrap(
                df["task"].to_numpy(),
                df["outcome"].to_numpy(float),
                n_resamples=n_resamples,
                seed=prep.seed_for("pass_rate", p),
            )
            row.update(
                pass_rate=x / n,
                wilson_low=wl,
                wilson_high=wh,
                exact_low=cl,
                exact_high=ch,
                task_mean=boot.estimate,
                task_boot_low=boot.low,
                task_boot_high=boot.high,
            )
        rows.append(row)
    return pd.DataFrame(rows)


def pass_k_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing and k: pass@k and pass^k averaged over tasks (tasks with fewer than k runs dropped)."""
    rows = []
    for p in prep.pairings:
        df = _outcomes(prep, p)
        if df.empty:
            continue
        g = df.groupby("task")["outcome"]
        n, c = g.count().to_numpy(), g.sum().to_numpy().astype(int)
        for k in [k for k in range(1, int(n.max()) + 1)]:
            at, hat = mean_pass_at_k(n, c, k), mean_pass_hat_k(n, c, k)
            rows.append(
                {
                    "pairing": p,
                    "k": k,
                    "pass_at_k": at.value,
                    "pass_hat_k": hat.value,
                    "tasks": at.tasks,
                    "tasks_dropped": at.dropped,
                }
            )
    return pd.DataFrame(rows)


def variance_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: between- and within-task variance, and how much the score of one repeat moves."""
    rows = []
    for p in prep.pairings:
        df = _outcomes(prep, p)
        row: dict[str, object] = {"pairing": p, "tasks": df["task"].nunique()}
        try:
            v = variance_components(df["task"].to_numpy(), df["outcome"].to_numpy(float))
            row.update(between_var=v.between, within_var=v.within, between_share=v.between_share)
        except ValueError:
            row.update(between_var=np.nan, within_var=np.nan, between_share=np.nan)
        if not df.empty:
            r = score_per_repeat(df["repeat"].to_numpy(), df["outcome"].to_numpy(float))
            row.update(
                repeats=r.scores.size, repeat_mean=r.mean, repeat_sd=r.sd, repeat_min=r.low, repeat_max=r.high
            )
        rows.append(row)
    return pd.DataFrame(rows)


def paired_table(prep: Prepared, *, value: str, n_resamples: int = 10_000) -> pd.DataFrame:
    """Per pair of pairings, by task: better/worse/tied, mean difference, range (>= 12 tasks), tests."""
    rows = []
    runs = prep.runs[prep.runs["compliant"] == 1.0] if value == "score" else prep.runs
    for a, b in combinations(prep.pairings, 2):
        ra, rb = runs[runs["pairing"] == a], runs[runs["pairing"] == b]
        try:
            cmp = compare_by_task(
                ra["task"].to_numpy(),
                ra[value].to_numpy(float),
                rb["task"].to_numpy(),
                rb[value].to_numpy(float),
                n_resamples=n_resamples,
                seed=prep.seed_for("paired", a, b),
                # a pass is better than a fail; a score is better in its metric's direction
                higher_is_better=prep.higher_is_better if value == "score" else True,
            )
        except ValueError:
            continue
        test = sign_flip_test(cmp.differences, n_resamples=n_resamples, seed=prep.seed_for("sign_flip", a, b))
        row: dict[str, object] = {
            "a": a,
            "b": b,
            "tasks": cmp.tasks,
            "a_better": cmp.better,
            "b_better": cmp.worse,
            "tied": cmp.tied,
            "mean_difference": cmp.mean_difference,
            "range_low": cmp.low,
            "range_high": cmp.high,
            "sign_flip_p": test.p_value,
        }
        if value == "outcome":
            both = (
                ra[["task", "repeat", "outcome"]]
                .merge(rb[["task", "repeat", "outcome"]], on=["task", "repeat"], suffixes=("_a", "_b"))
                .dropna()
            )
            only_a, only_b = discordant_pairs(both["outcome_a"].to_numpy(), both["outcome_b"].to_numpy())
            row.update(
                paired_runs=len(both),
                only_a_passed=only_a,
                only_b_passed=only_b,
                mcnemar_p=mcnemar_exact(only_a, only_b),
                tasks_needed=_tasks_needed(ra, rb, cmp.differences),
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _tasks_needed(ra: pd.DataFrame, rb: pd.DataFrame, diffs: np.ndarray) -> float:
    """Miller's task count for the observed difference, with plug-in variances (NaN when not estimable)."""
    d = float(diffs.mean())
    try:
        va = variance_components(ra["task"].to_numpy(), ra["outcome"].to_numpy(float))
        vb = variance_components(rb["task"].to_numpy(), rb["outcome"].to_numpy(float))
    except ValueError:
        return float("nan")
    if d == 0 or diffs.size < 2:
        return float("nan")
    k = max(1, round(min(va.runs_per_task, vb.runs_per_task)))
    # the observed per-task differences carry run noise; what is left is the task-level part w^2
    w2 = max(0.0, float(diffs.var(ddof=1)) - (va.within + vb.within) / k)
    return float(np.ceil(miller_task_count(d, w2, va.within, vb.within, k)))


def kappa_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing and overall: Cohen's kappa of the judge's verdict against the tests' outcome."""
    rows = []
    groups = [(p, prep.of(p)) for p in prep.pairings] + [("all pairings", prep.runs)]
    for name, df in groups:
        row: dict[str, object] = {"pairing": name}
        try:
            k = cohen_kappa(df["judge_outcome"].to_numpy(object), df["outcome"].to_numpy(object))
            row.update(items=k.n, dropped=k.dropped, agreement=k.observed, kappa=k.kappa)
        except ValueError as exc:
            row.update(items=0, dropped=len(df), agreement=np.nan, kappa=np.nan, note=str(exc))
        rows.append(row)
    return pd.DataFrame(rows)


def has_outcomes(prep: Prepared) -> bool:
    return present(prep.runs, "outcome")
