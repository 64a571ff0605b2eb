"""The divergence report: why identical runs differ, from a `DivergenceAnalysis` (orchestrator/diverge).

`write_divergence_report` writes report.html (self-contained), summary.md, tables/*.csv and
figures/hazard.png: the definitions used and the pair check, the four-number outcome table with McNemar,
net swing and disagreement, the different-seed control, the machine and time checks of each arm, the
first-divergence hazard with its risk sets, the divergence classes and speakers, the divergence
statistics, the declared causes against their base rates, the per-task picture, and one chosen pair's two
transcripts side by side. Every statistic says whether it was declared before the runs or is exploratory.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from orchestrator.diverge.analysis import DivergenceAnalysis, Finding
from orchestrator.diverge.view import PairView
from orchestrator.report.diverge_view import pair_html, pair_markdown
from orchestrator.report.placement import checks_frame, verdicts
from orchestrator.report.render import VIEWER_URL, FigureSpec, ReportPaths, Section, TableSpec, write_report


@dataclass(frozen=True)
class DivergenceReportInput:
    """What the report shows beside the analysis: where it came from and what the reader must know."""

    source: str
    #: the definitions used and whether they were filed before the runs (one sentence)
    definitions_note: str
    #: counts of the pair check (role, seeds, configs, left out -> pairs), when the pairs came from the ledger
    pair_check: Mapping[str, int] = field(default_factory=dict)
    problems: Sequence[str] = ()
    pair: PairView | None = None
    #: the `sbx view` address the pair's run ids link to (render.py VIEWER_URL), when the runs are a
    #: ledger's (a study's arms); None for transcripts named by file, which no viewer knows
    viewer: str | None = None


def _status(finding: Finding | Any) -> str:
    return "exploratory" if finding.exploratory else "declared before the runs"


def _section(key: str, title: str, finding: Finding) -> Section:
    s = Section(key, title)
    if finding.value is None:
        s.skipped = finding.skipped or "not computed"
    return s


def _definitions(analysis: DivergenceAnalysis, extra: DivergenceReportInput) -> Section:
    s = Section("definitions", "Definitions and pairs")
    s.intro = extra.definitions_note
    d = analysis.definitions
    rows = [
        ("preregistered", analysis.preregistered),
        (
            "declared analyses",
            ", ".join(sorted(d.declared)) if analysis.preregistered else "none (exploratory)",
        ),
        (
            "agreement",
            d.agreement.kind
            + (
                f", passes at {d.agreement.pass_threshold:g}, tolerance {d.agreement.tolerance:g}"
                if d.agreement.kind == "score"
                else ""
            ),
        ),
        ("normalisation", ", ".join(f"{k}={v}" for k, v in d.normalisation.model_dump().items())),
        ("min_at_risk", d.thresholds.min_at_risk),
        ("declared causes", ", ".join(c.name for c in d.causes) or "none"),
    ]
    s.tables.append(
        TableSpec("definitions", "Definitions used", pd.DataFrame(rows, columns=["item", "value"]))
    )
    c = analysis.check
    counts = [
        ("pairs analysed", c.pairs),
        ("same seed (main)", c.same_seed),
        ("different seed (control)", c.different_seed),
        *((f"excluded: {k}", v) for k, v in sorted(c.excluded.items())),
        ("configs not recorded on both sides", c.config_unchecked),
        ("same-seed pairs without compared transcripts", c.without_comparison),
    ]
    counts += [(f"pair check: {k}", v) for k, v in extra.pair_check.items()]
    s.tables.append(
        TableSpec(
            "pair_check",
            "Which pairs entered, and how their seeds and configs compared",
            pd.DataFrame(counts, columns=["pairs", "count"]),
        )
    )
    s.notes += [f"Warning: {w}" for w in analysis.warnings] + [f"Problem: {p}" for p in extra.problems]
    return s


def _outcomes(analysis: DivergenceAnalysis) -> Section:
    s = _section("outcomes", "Outcomes: the four-number table", analysis.outcome_table)
    t = analysis.outcome_table.value
    if t is None:  # not computed: _section has marked it skipped
        return s
    s.intro = (
        f"Same-seed pairs ({_status(analysis.outcome_table)}). Exact McNemar p on the discordant pairs; "
        "net swing (A's pass rate minus B's) and disagreement with task-clustered percentile intervals."
    )
    s.tables.append(
        TableSpec(
            "outcome_table",
            "A against B",
            pd.DataFrame(
                [
                    ["A passed", t.both, t.first_only, t.both + t.first_only],
                    ["A failed", t.second_only, t.neither, t.second_only + t.neither],
                    ["total", t.both + t.second_only, t.first_only + t.neither, t.pairs],
                ],
                columns=["", "B passed", "B failed", "total"],
            ),
        )
    )
    rows: list[list[Any]] = [
        ["pass rate A", t.first_rate, np.nan, np.nan, _status(analysis.outcome_table)],
        ["pass rate B", t.second_rate, np.nan, np.nan, _status(analysis.outcome_table)],
        ["discordant pairs", t.discordant, np.nan, np.nan, _status(analysis.outcome_table)],
        ["McNemar exact p", t.mcnemar_p, np.nan, np.nan, _status(analysis.outcome_table)],
    ]
    for name, finding in (("net swing", analysis.net_swing), ("disagreement", analysis.disagreement)):
        v = finding.value
        rows.append(
            [
                name,
                v.estimate if v else np.nan,
                v.low if v else np.nan,
                v.high if v else np.nan,
                _status(finding) if v else f"skipped: {finding.skipped}",
            ]
        )
    s.tables.append(
        TableSpec(
            "outcome_statistics",
            "Outcome statistics",
            pd.DataFrame(rows, columns=["statistic", "value", "low", "high", "status"]),
        )
    )
    if t.dropped:
        s.notes.append(f"{t.dropped} pairs without both outcomes were left out.")
    return s


def _seed_control(analysis: DivergenceAnalysis) -> Section:
    s = _section("seed_control", "Same seed against different seed", analysis.seed_control)
    v = analysis.seed_control.value
    if v is None:  # not computed: _section has marked it skipped
        return s
    s.intro = (
        f"How often pairs disagree with the same seed and with different seeds ({_status(analysis.seed_control)}); "
        "the difference has a task-clustered interval and a permutation p-value."
    )
    s.tables.append(
        TableSpec(
            "seed_control",
            "Disagreement by seed",
            pd.DataFrame(
                [
                    {
                        "same_seed_rate": v.same_rate,
                        "same_seed_pairs": v.same_pairs,
                        "different_seed_rate": v.different_rate,
                        "different_seed_pairs": v.different_pairs,
                        "difference": v.difference,
                        "low": v.low,
                        "high": v.high,
                        "p_value": v.p_value,
                    }
                ]
            ),
        )
    )
    return s


def _placement(analysis: DivergenceAnalysis) -> Section:
    s = _section("placement", "Where and when the runs ran", analysis.placement)
    checks = analysis.placement.value
    if checks is None:  # not computed: _section has marked it skipped
        return s
    frame = checks_frame(checks)
    s.intro = (
        f"Per arm ({_status(analysis.placement)}): outcomes (or scores) centred within task against node "
        "and slot (one-way ANOVA F, permutation p, share of variance against the share random grouping "
        "gives) and against run order and start time (Spearman's rho, permutation p)."
    )
    s.tables.append(TableSpec("placement", "Node, slot, run order and start time", frame))
    s.notes += verdicts(frame)
    return s


def hazard_figure(hazard: Any) -> bytes:
    """Hazard by call index with its intervals, and the risk set under it (PNG)."""
    buf = io.BytesIO()
    hazard_plot(hazard).savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def hazard_plot(hazard: Any) -> Figure:
    """The hazard figure. Its x axis is the call index: whole numbers, a half call of room each side (left to
    matplotlib, one row at call 0 got an axis from -0.04 to 0.04 with fractional ticks)."""
    rows = hazard.rows
    x = np.array([r.index for r in rows])
    h = np.array([r.hazard for r in rows])
    err = np.vstack([h - np.array([r.low for r in rows]), np.array([r.high for r in rows]) - h])
    fig = Figure(figsize=(8.0, 4.6))
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.errorbar(x, h, yerr=err, fmt="o-", ms=4, capsize=3, color="#1f4e79")
    top.set_ylabel("first-divergence hazard")
    top.set_ylim(-0.02, 1.02)
    top.grid(alpha=0.3)
    top.set_title(
        f"Pairs still identical that diverge at each call (shown while at risk >= {hazard.min_at_risk})",
        fontsize=10,
    )
    bottom.bar(x, [r.at_risk for r in rows], color="#9db4cf")
    for xi, r in zip(x, rows, strict=True):
        bottom.annotate(str(r.at_risk), (xi, r.at_risk), ha="center", va="bottom", fontsize=7)
    bottom.set_ylabel("at risk")
    bottom.set_xlabel("call index")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    bottom.set_xlim(float(x.min()) - 0.5, float(x.max()) + 0.5)
    return fig


def _hazard(analysis: DivergenceAnalysis) -> Section:
    s = _section("hazard", "First-divergence hazard by call", analysis.hazard)
    v = analysis.hazard.value
    if v is None:  # not computed: _section has marked it skipped
        return s
    s.intro = (
        f"Among same-seed pairs still identical before call i, the share that first diverge at call i, with "
        f"{v.confidence:.0%} Clopper-Pearson intervals and the risk set; shown while at least {v.min_at_risk} "
        f"pairs are at risk ({_status(analysis.hazard)}). {v.pairs} pairs compared: {v.diverged} diverged, "
        f"{v.never_diverged} never did; the table stops at call {v.stopped_at} "
        f"({v.at_risk_there} pairs at risk there)."
    )
    if v.rows:
        s.figures.append(
            FigureSpec(
                "hazard",
                "Hazard with intervals; risk set below",
                hazard_figure(v),
                "first-divergence hazard by call index with risk sets",
            )
        )
    s.tables.append(
        TableSpec(
            "hazard",
            "Hazard by call",
            pd.DataFrame(
                [
                    {
                        "call": r.index,
                        "at_risk": r.at_risk,
                        "diverged": r.diverged,
                        "hazard": r.hazard,
                        "low": r.low,
                        "high": r.high,
                    }
                    for r in v.rows
                ],
                columns=["call", "at_risk", "diverged", "hazard", "low", "high"],
            ),
        )
    )
    return s


def _classes(analysis: DivergenceAnalysis) -> Section:
    s = _section("classes", "How pairs first diverged", analysis.divergence_classes)
    classes = analysis.divergence_classes.value
    if classes is None:  # not computed: _section has marked it skipped
        return s
    s.intro = (
        "response: identical request, different answer; request: a different request after identical answers "
        "(a tool result or the environment differed); call_order: other speaker or order; call_count: one run "
        f"made more calls ({_status(analysis.divergence_classes)})."
    )
    s.tables.append(
        TableSpec(
            "divergence_classes",
            "Divergence classes",
            pd.DataFrame(sorted(classes.items()), columns=["class", "pairs"]),
        )
    )
    if analysis.speakers:
        s.tables.append(
            TableSpec(
                "speakers",
                "Who made the diverging call (run A)",
                pd.DataFrame(sorted(analysis.speakers.items()), columns=["speaker", "pairs"]),
            )
        )
    return s


def _divergence_statistics(analysis: DivergenceAnalysis) -> Section:
    s = Section(
        "divergence_statistics", "Do tasks explain where runs part, and does parting early flip outcomes?"
    )
    rows = []
    share = analysis.between_task_share
    if share.value is not None:
        v = share.value
        rows.append(
            {
                "statistic": "between-task share of the divergence index",
                "value": v.share,
                "null_mean": v.null_mean_share,
                "p_value": v.p_value,
                "n": v.n,
                "threshold": v.threshold,
                "status": _status(share),
            }
        )
    else:
        rows.append(
            {"statistic": "between-task share of the divergence index", "status": f"skipped: {share.skipped}"}
        )
    rank = analysis.divergence_vs_disagreement
    if rank.value is not None:
        rows.append(
            {
                "statistic": "Spearman: divergence index vs outcome disagreement",
                "value": rank.value.rho,
                "p_value": rank.value.p_value,
                "n": rank.value.n,
                "status": _status(rank),
            }
        )
    else:
        rows.append(
            {
                "statistic": "Spearman: divergence index vs outcome disagreement",
                "status": f"skipped: {rank.skipped}",
            }
        )
    s.intro = (
        "The share is set against its permutation null (random grouping puts (g-1)/(n-1) between groups); "
        "the rank correlation uses diverged same-seed pairs."
    )
    s.tables.append(TableSpec("divergence_statistics", "Divergence statistics", pd.DataFrame(rows)))
    return s


def _causes(analysis: DivergenceAnalysis) -> Section:
    s = Section("causes", "Declared causes against their base rates")
    if not analysis.causes:
        s.skipped = "no cause was declared"
        return s
    rows = []
    for c in analysis.causes:
        row: dict[str, Any] = {
            "cause": c.name,
            "status": "exploratory" if c.exploratory else "declared before the runs",
        }
        if c.refused:
            row["status"] = f"refused: {c.refused}"
        elif c.skipped:
            row["status"] += f"; skipped: {c.skipped}"
        elif c.value is not None:
            v = c.value
            row |= {
                "at_divergence": v.at_divergence,
                "divergences": v.divergences,
                "rate_at_divergence": v.rate_at_divergence,
                "at_control": v.at_first_call,
                "controls": v.first_calls,
                "base_rate": v.base_rate,
                "odds_ratio": v.odds_ratio,
                "fisher_p": v.p_value,
            }
        rows.append(row)
    s.intro = (
        "A cause's rate at the first divergence against its rate at its control call, where nothing has "
        "diverged yet (Fisher's exact test; rows share pairs, so p is a screen). A cause without a control "
        "is refused, never reported."
    )
    s.tables.append(TableSpec("causes", "Causes", pd.DataFrame(rows)))
    return s


def _tasks(analysis: DivergenceAnalysis) -> Section:
    s = Section("tasks", "Per task")
    if not analysis.tasks:
        s.skipped = "no same-seed pair"
        return s
    s.intro = (
        "Pairs, outcome disagreements, compared and identical pairs, and where the others first diverged."
    )
    s.tables.append(
        TableSpec(
            "tasks",
            "Per task",
            pd.DataFrame(
                [
                    {
                        "task": t.task,
                        "pairs": t.pairs,
                        "disagreements": t.disagreements,
                        "compared": t.compared,
                        "identical": t.identical,
                        "median_first_divergence": t.median_first_divergence,
                        "classes": ", ".join(f"{k} {v}" for k, v in sorted(t.classes.items())),
                    }
                    for t in analysis.tasks
                ]
            ),
        )
    )
    return s


def _pair(view: PairView | None, viewer: str | None) -> Section:
    s = Section("pair", "One pair side by side")
    if view is None:
        s.skipped = "no pair with both transcripts"
        return s
    s.intro = (
        "What each call added to the conversation (the prompt or the latest tool result) and what the model "
        "answered, as recorded (not normalised; long texts cut). The first divergence is highlighted."
    )
    s.html, s.markdown = pair_html(view, viewer), pair_markdown(view)
    if viewer:
        s.notes.append(f"Each run id links to the run's page in `sbx view` at {viewer} (start `sbx view` on "
                       "the study's home to open it; served by `sbx view`, the links go to that viewer).")
    return s


def write_divergence_report(
    analysis: DivergenceAnalysis, extra: DivergenceReportInput, out_dir: Path, *, title: str
) -> ReportPaths:
    """Write the divergence report (see the module docstring) into `out_dir`."""
    sections = [
        _definitions(analysis, extra),
        _outcomes(analysis),
        _seed_control(analysis),
        _placement(analysis),
        _hazard(analysis),
        _classes(analysis),
        _divergence_statistics(analysis),
        _causes(analysis),
        _tasks(analysis),
        _pair(extra.pair, extra.viewer),
    ]
    preamble = [
        f"Source: {extra.source}.",
        "Preregistered: every statistic below was declared before the runs, unless marked exploratory."
        if analysis.preregistered
        else "Exploratory: the definitions were not filed before the runs started.",
    ]
    return write_report(out_dir, title, preamble, sections, extra.viewer or VIEWER_URL)
