"""The tasks x pairings pass-rate table and the grading flakiness table, against counts by hand."""

from pathlib import Path

import numpy as np
import pandas as pd

from orchestrator.report.build import build_report
from orchestrator.report.prepare import prepare
from orchestrator.report.runs_table import validate_runs
from orchestrator.report.task_grid import flakiness_table, task_pass_table
from orchestrator.stats import Exclusion


def _runs() -> pd.DataFrame:
    rows = []
    # task a: A passes 2 of 3, B 0 of 3; task b: A 3 of 3, B 1 of 2 and one run not graded (blank)
    for task, pairing, outcomes in (("a", "A", [1, 1, 0]), ("a", "B", [0, 0, 0]), ("b", "A", [1, 1, 1]),
                                    ("b", "B", [1, 0, None])):
        for r, o in enumerate(outcomes, start=1):
            rows.append({"pairing": pairing, "task": task, "repeat": r, "outcome": o,
                         "grade_repeats": 3 if task == "b" else 1,
                         "gradings_agree": (task, pairing, r) != ("b", "A", 2),
                         "flaky_tests": 2 if (task, pairing, r) == ("b", "A", 2) else 0})
    return pd.DataFrame(rows)


def _prep() -> object:
    return prepare(validate_runs(_runs(), source="test"), Exclusion.BOTH, 0)


def test_task_pass_table_counts_by_hand() -> None:
    t = task_pass_table(_prep()).set_index(["task", "pairing"])
    assert (t.loc[("a", "A"), "passes"], t.loc[("a", "A"), "runs"]) == (2, 3)
    assert (t.loc[("a", "B"), "passes"], t.loc[("a", "B"), "runs"]) == (0, 3)
    assert (t.loc[("b", "A"), "passes"], t.loc[("b", "A"), "runs"]) == (3, 3)
    assert (t.loc[("b", "B"), "passes"], t.loc[("b", "B"), "runs"], t.loc[("b", "B"), "missing"]) == (1, 2, 1)
    assert t.loc[("a", "A"), "pass_rate"] == 2 / 3 and t.loc[("b", "B"), "pass_rate"] == 0.5


def test_flakiness_counts_disagreeing_repeated_gradings() -> None:
    f = flakiness_table(_prep()).set_index("task")
    assert f.loc["a", "runs_graded_repeatedly"] == 0 and np.isnan(f.loc["a", "disagreement_rate"])
    assert f.loc["b", "graded_runs"] == 5 and f.loc["b", "runs_graded_repeatedly"] == 5
    assert f.loc["b", "gradings_disagreed"] == 1 and f.loc["b", "disagreement_rate"] == 1 / 5
    assert f.loc["b", "max_flaky_tests"] == 2


def test_the_report_has_the_task_section(tmp_path: Path) -> None:
    paths = build_report(_runs(), tmp_path, seed=0)
    assert {"task_pass_rates", "flakiness"} <= set(paths.tables)
    assert paths.figures["task_pass_rates"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = paths.html.read_text()
    assert "Pass/fail by task" in html
