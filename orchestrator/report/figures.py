"""Report figures, drawn with matplotlib's Agg canvas (no pyplot, no display) and returned as PNG bytes."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from orchestrator.report.prepare import Prepared

_DPI = 110
_COLOURS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, bbox_inches="tight")
    return buf.getvalue()


def score_label(prep: Prepared) -> str:
    """An axis's name for the reported score: its column and, when the runs name it, the metric and direction."""
    column = prep.score_column or "score"
    return f"{column}: {prep.metric_words}" if prep.metric else column


def strip_plot(prep: Prepared) -> bytes:
    """One row per pairing, one mark per scored run; excluded runs as red crosses, unaudited as hollow."""
    df = prep.runs[prep.runs["score"].notna()]
    means = {
        p: df.loc[(df["pairing"] == p) & (df["compliant"] == 1.0), "score"].mean() for p in prep.pairings
    }
    # the best compliant mean on top (the last row), in the metric's direction
    order = sorted(prep.pairings, key=lambda p: (np.nan_to_num(prep.sign * means[p], nan=-np.inf), p))
    fig = Figure(figsize=(8.0, 0.55 * len(order) + 1.4))
    ax = fig.subplots()
    rng = np.random.default_rng(prep.seed_for("strip"))
    for y, p in enumerate(order):
        g = df[df["pairing"] == p]
        jitter = rng.uniform(-0.18, 0.18, size=len(g))
        comp = (g["compliant"] == 1.0).to_numpy()
        excl = (g["compliant"] == 0.0).to_numpy()
        unk = g["compliant"].isna().to_numpy()
        x = g["score"].to_numpy(float)
        ax.scatter(
            x[comp],
            y + jitter[comp],
            s=18,
            color="#1f4e79",
            alpha=0.75,
            label="compliant" if y == 0 else None,
        )
        ax.scatter(
            x[excl],
            y + jitter[excl],
            s=30,
            marker="x",
            color="#c62828",
            label="excluded (flagged)" if y == 0 else None,
        )
        ax.scatter(
            x[unk],
            y + jitter[unk],
            s=20,
            facecolors="none",
            edgecolors="#777777",
            label="not audited" if y == 0 else None,
        )
        if not np.isnan(means[p]):
            ax.plot(
                [means[p]] * 2,
                [y - 0.32, y + 0.32],
                color="black",
                linewidth=2,
                label="compliant mean" if y == 0 else None,
            )
    base = prep.baseline()
    if base is not None:  # the starting code: what every run is meant to beat
        ax.axvline(base, color="#555555", linestyle=":", linewidth=1.2, label="starting code")
    ax.set_yticks(range(len(order)), labels=order)
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.set_xlabel(score_label(prep))
    ax.grid(axis="x", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.14 - 0.3 / max(1, len(order))),
            ncol=4,
            frameon=False,
            fontsize=8,
        )
    return _png(fig)


def pass_k_plot(table: pd.DataFrame) -> bytes:
    """pass@k and pass^k against k, one line per pairing."""
    fig = Figure(figsize=(9.0, 3.6))
    left, right = fig.subplots(1, 2, sharex=True)
    for i, (p, g) in enumerate(table.groupby("pairing", sort=False)):
        colour = _COLOURS[i % len(_COLOURS)]
        left.plot(g["k"], g["pass_at_k"], marker="o", ms=3, color=colour, label=str(p))
        right.plot(g["k"], g["pass_hat_k"], marker="o", ms=3, color=colour, label=str(p))
    for ax, title in ((left, "pass@k: at least one of k passes"), (right, "pass^k: all k pass")):
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("k")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    right.legend(fontsize=8, frameon=False, loc="best")
    return _png(fig)


def best_of_k_plot(table: pd.DataFrame, score_label: str) -> bytes:
    """Median kept value with its 5th-95th percentile range against k, one series per pairing."""
    fig = Figure(figsize=(8.0, 3.8))
    ax = fig.subplots()
    groups = list(table.groupby("pairing", sort=False))
    width = 0.5 / max(1, len(groups))
    for i, (p, g) in enumerate(groups):
        colour = _COLOURS[i % len(_COLOURS)]
        x = np.arange(len(g)) + (i - (len(groups) - 1) / 2) * width
        med = g["median_kept"].to_numpy(float)
        err = np.vstack([med - g["p05_kept"].to_numpy(float), g["p95_kept"].to_numpy(float) - med])
        ax.errorbar(x, med, yerr=np.nan_to_num(err), fmt="o", ms=4, capsize=3, color=colour, label=str(p))
    if groups:
        ks = groups[0][1]["k"].tolist()
        ax.set_xticks(range(len(ks)), labels=[str(k) for k in ks])
    ax.set_xlabel("k attempts (best compliant kept, chosen by eval score)")
    ax.set_ylabel(f"kept {score_label}")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _png(fig)
