"""Pass/fail by task: the tasks x pairings pass-rate picture and per-task flakiness of the grading.

`task_pass_table` is the long form (one row per task and pairing: runs, passes, pass rate) that the
heatmap draws; `flakiness_table` says, per task, how often repeated gradings of the same delivery
disagreed (`grade_repeats` > 1) and how many expected tests changed outcome between them. Both count
only runs with an outcome (blank outcomes are listed as missing, never read as a fail).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from orchestrator.report.figures import _png
from orchestrator.report.prepare import Prepared
from orchestrator.report.runs_table import present


def task_pass_table(prep: Prepared) -> pd.DataFrame:
    """One row per (task, pairing): runs with an outcome, passes, pass rate, runs without an outcome."""
    df = prep.runs
    rows = []
    for task in sorted(df["task"].unique()):
        for p in prep.pairings:
            g = df[(df["task"] == task) & (df["pairing"] == p)]
            known = g[g["outcome"].notna()]
            n, x = len(known), int(known["outcome"].sum())
            rows.append({"task": task, "pairing": p, "runs": n, "passes": x,
                         "pass_rate": x / n if n else np.nan, "missing": len(g) - n})
    return pd.DataFrame(rows, columns=["task", "pairing", "runs", "passes", "pass_rate", "missing"])


def pass_rate_heatmap(table: pd.DataFrame) -> bytes:
    """Tasks (rows) x pairings (columns), coloured by pass rate, each cell labelled passes/runs."""
    tasks = list(dict.fromkeys(table["task"]))
    pairings = list(dict.fromkeys(table["pairing"]))
    grid = np.full((len(tasks), len(pairings)), np.nan)
    labels = [["" for _ in pairings] for _ in tasks]
    for r in table.itertuples(index=False):
        i, j = tasks.index(r.task), pairings.index(r.pairing)
        grid[i, j] = r.pass_rate
        labels[i][j] = f"{r.passes}/{r.runs}" if r.runs else "-"
    fig = Figure(figsize=(1.3 * len(pairings) + 3.5, 0.42 * len(tasks) + 1.6))
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdYlGn", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(pairings)), pairings, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(len(tasks)), tasks, fontsize=8)
    for i in range(len(tasks)):
        for j in range(len(pairings)):
            ax.text(j, i, labels[i][j], ha="center", va="center", fontsize=7)
    fig.colorbar(image, ax=ax, label="pass rate", shrink=0.8)
    return _png(fig)


def flakiness_table(prep: Prepared) -> pd.DataFrame:
    """Per task: graded runs, runs graded more than once, runs whose gradings disagreed, flaky tests seen."""
    df = prep.runs[prep.runs["outcome"].notna()]
    has_repeats = present(df, "grade_repeats")
    rows = []
    for task in sorted(df["task"].unique()):
        g = df[df["task"] == task]
        repeated = g[g["grade_repeats"] > 1] if has_repeats else g.iloc[0:0]
        disagree = int((repeated["gradings_agree"] == 0.0).sum()) if present(repeated, "gradings_agree") else 0
        flaky = repeated["flaky_tests"].dropna() if present(repeated, "flaky_tests") else pd.Series(dtype=float)
        rows.append({
            "task": task, "graded_runs": len(g), "runs_graded_repeatedly": len(repeated),
            "gradings_disagreed": disagree,
            "disagreement_rate": disagree / len(repeated) if len(repeated) else np.nan,
            "max_flaky_tests": int(flaky.max()) if len(flaky) else 0,
        })
    return pd.DataFrame(rows, columns=["task", "graded_runs", "runs_graded_repeatedly", "gradings_disagreed",
                                       "disagreement_rate", "max_flaky_tests"])
