"""The divergence report: its tables hold the analysis's numbers, the hazard figure and the paired view are
there, exploratory findings say so, and what agents and models wrote is escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.diverge.analysis import PairedRuns, RunSide, analyse, pair_evidence
from orchestrator.diverge.compare import compare_runs
from orchestrator.diverge.view import pair_view
from orchestrator.report.divergence import DivergenceReportInput, write_divergence_report
from orchestrator.specs.diverge import BaseRateControl, Cause, DivergeDefinitions, Thresholds
from orchestrator.specs.transcript import CallRecord
from tests.diverge.standin import Variation, pair

D = DivergeDefinitions(
    thresholds=Thresholds(min_at_risk=4, n_resamples=500),
    causes=(
        Cause(
            name="fp",
            observe="response_value_differs",
            key="system_fingerprint",
            control=BaseRateControl(at_call=0),
        ),
        Cause(name="bare", observe="outcome_differs"),
    ),
)


@pytest.fixture(scope="module")
def made():
    pairs, runs = [], {}
    for i in range(16):
        variation = [
            Variation(),
            Variation("response", 1),
            Variation("tool_result", 2),
            Variation("response", 3),
        ][i % 4]
        a, b = pair("opencode", i, variation)
        comparison, causes = pair_evidence(a, b, D)
        pairs.append(
            PairedRuns(
                f"t{i % 4}",
                i // 4,
                RunSide(f"a{i}", outcome=True, seed=1, node=f"n{i % 2}", order=i),
                RunSide(f"b{i}", outcome=i % 3 != 0, seed=1, node=f"n{i % 2}", order=16 + i),
                comparison,
                causes,
            )
        )
        runs[i] = (a, b)
    return pairs, runs


def test_tables_hold_the_analysis_numbers(tmp_path: Path, made) -> None:
    pairs, runs = made
    analysis = analyse(pairs, D, seed=0)
    view = pair_view("t1", 0, "a1", "b1", *runs[1], pairs[1].comparison)
    paths = write_divergence_report(
        analysis,
        DivergenceReportInput(
            "test", "filed before the runs", {"main: seeds equal, configs equal": 16}, (), view
        ),
        tmp_path,
        title="t",
    )
    assert set(paths.figures) == {"hazard"}
    hazard = pd.read_csv(paths.tables["hazard"])
    assert hazard["at_risk"].tolist() == [r.at_risk for r in analysis.hazard.value.rows]
    assert hazard["hazard"].tolist() == pytest.approx([r.hazard for r in analysis.hazard.value.rows])
    table = pd.read_csv(paths.tables["outcome_table"]).set_index("Unnamed: 0")
    t = analysis.outcome_table.value
    assert (table.loc["A passed", "B passed"], table.loc["A passed", "B failed"]) == (t.both, t.first_only)
    stats = pd.read_csv(paths.tables["outcome_statistics"]).set_index("statistic")
    assert stats.loc["McNemar exact p", "value"] == pytest.approx(t.mcnemar_p)
    assert stats.loc["disagreement", "low"] == pytest.approx(analysis.disagreement.value.low)
    assert (stats["status"] == "declared before the runs").all()
    classes = pd.read_csv(paths.tables["divergence_classes"]).set_index("class")["pairs"].to_dict()
    assert classes == analysis.divergence_classes.value
    causes = pd.read_csv(paths.tables["causes"]).set_index("cause")
    assert causes.loc["fp", "base_rate"] == pytest.approx(analysis.causes[0].value.base_rate)
    assert causes.loc["bare", "status"].startswith("refused: no base-rate control")
    assert pd.read_csv(paths.tables["pair_check"]).iloc[-1].tolist() == [
        "pair check: main: seeds equal, configs equal",
        16,
    ]
    html = paths.html.read_text()
    assert html.count("data:image/png;base64,") == 1 and "src='http" not in html
    assert "<tr class='first differs' data-call='2'>" in html  # opencode's title call shifts step 1 to call 2
    md = paths.markdown.read_text()
    assert "| 2 **first divergence** | same | differs |" in md


def test_not_filed_first_every_statistic_says_exploratory(tmp_path: Path, made) -> None:
    pairs, _ = made
    analysis = analyse(pairs, D, seed=0, preregistered=False)
    paths = write_divergence_report(
        analysis, DivergenceReportInput("test", "never filed"), tmp_path, title="t"
    )
    stats = pd.read_csv(paths.tables["outcome_statistics"])
    assert (stats["status"] == "exploratory").all()
    md = paths.markdown.read_text()
    assert "Exploratory: the definitions were not filed before the runs started." in md
    assert "Skipped: no pair with both transcripts" in md


def test_what_agents_and_models_wrote_is_escaped(tmp_path: Path, made) -> None:
    pairs, runs = made
    a, b = runs[1]
    evil = json.loads(b[2].model_dump_json())
    body = json.loads(evil["request"]["body"])
    body["messages"][-1]["content"] = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    evil["request"]["body"] = json.dumps(body)
    b = [*b[:2], CallRecord.model_validate_json(json.dumps(evil)), *b[3:]]
    view = pair_view("t<b>", 0, "a1", "b1", a, b, compare_runs(a, b))
    analysis = analyse(pairs, D, seed=0)
    paths = write_divergence_report(analysis, DivergenceReportInput("x", "y", pair=view), tmp_path, title="t")
    html = paths.html.read_text()
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize("indices", [(0,), (0, 1, 2, 3)])
def test_the_hazard_axis_is_the_call_index(indices: tuple[int, ...]) -> None:
    """Whole call numbers with half a call of room each side (issue 24, item 5: one row at call 0 was drawn on
    an axis from -0.4 to 0.4)."""
    from orchestrator.report.divergence import hazard_plot
    from orchestrator.stats.hazard import DivergenceHazard, HazardRow

    rows = tuple(HazardRow(i, 10, 1, 0.1, 0.0, 0.4) for i in indices)
    hazard = DivergenceHazard(rows=rows, **{k: 0 for k in DivergenceHazard.__dataclass_fields__ if k != "rows"})
    fig = hazard_plot(hazard)
    axis = fig.axes[1]
    fig.canvas.draw()  # ticks are placed when drawn
    low, high = axis.get_xlim()
    assert (low, high) == (indices[0] - 0.5, indices[-1] + 0.5)
    shown = [float(t) for t in axis.get_xticks() if low <= t <= high]
    assert shown == [float(i) for i in indices]  # one tick per call index, whole numbers only


def test_a_study_pairs_run_ids_link_to_sbx_view_and_file_names_do_not(tmp_path: Path, made) -> None:
    """`sbx diverge STUDY` pairs a ledger's runs: their ids link to /run/ID in `sbx view`; transcripts named
    by file (`--pairs-csv`) are no viewer's runs and stay text."""
    from html.parser import HTMLParser

    pairs, runs = made
    a, b = runs[1]
    view = pair_view("t", 0, "r-20261203120000-aaaaaa", "r-20261203120000-bbbbbb", a, b, compare_runs(a, b))
    analysis = analyse(pairs, D, seed=0)

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.runs: list[str | None] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "a" and dict(attrs).get("class") == "run":
                self.runs.append(dict(attrs).get("href"))

    for viewer, want in (("http://127.0.0.1:8700/", ["http://127.0.0.1:8700/run/r-20261203120000-aaaaaa",
                                                     "http://127.0.0.1:8700/run/r-20261203120000-bbbbbb"]),
                         (None, [])):
        extra = DivergenceReportInput("x", "y", pair=view, viewer=viewer)
        html = write_divergence_report(analysis, extra, tmp_path / str(bool(viewer)), title="t").html.read_text()
        page = Links()
        page.feed(html)
        assert page.runs == want
        assert ("Each run id links" in html) == bool(viewer)
