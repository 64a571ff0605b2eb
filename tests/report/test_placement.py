"""The report's placement section: a planted node effect or time drift is found, and where none is planted
the same runs show nothing; the numbers equal scipy's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from orchestrator.report import build_report, validate_runs
from orchestrator.report.placement import placement_table
from orchestrator.report.prepare import prepare
from orchestrator.stats import Exclusion

START = 1_764_500_000.0


def study(*, node_effect: float = 0.0, drift: float = 0.0, seed: int = 7, runs: int = 60) -> pd.DataFrame:
    """Two pairings on two tasks; nodes, slots and start times spread evenly; the same noise whatever is planted."""
    rng = np.random.default_rng(seed)
    rows = []
    for p, pairing in enumerate(("A", "B")):
        for i in range(runs):
            order = 2 * i + p
            node = f"n{(i // 2) % 3}"
            task = f"t{i % 2}"
            score = 0.73 + 0.02 * (task == "t1") + rng.normal(0, 0.01)
            score += node_effect * (node == "n2" and pairing == "A") + drift * order / (2 * runs)
            rows.append(
                {
                    "pairing": pairing,
                    "task": task,
                    "repeat": i // 2,
                    "holdout_score": score,
                    "node": node,
                    "slot": str(order % 2),
                    "run_order": order,
                    "started_at": pd.Timestamp(START + 90 * order, unit="s", tz="UTC"),
                }
            )
    return pd.DataFrame(rows)


def _table(frame: pd.DataFrame) -> pd.DataFrame:
    prep = prepare(validate_runs(frame), Exclusion.BOTH, seed=0)
    table, value = placement_table(prep)
    assert value == "holdout_score"
    return table.set_index("pairing")


def test_a_planted_node_effect_is_found_and_without_it_the_same_runs_show_nothing() -> None:
    planted = _table(study(node_effect=0.02))
    clean = _table(study())
    assert (
        planted.loc["A", "node_p"] < 0.01
        and planted.loc["A", "node_share"] > 3 * planted.loc["A", "node_null_share"]
    )
    assert "node" in planted.loc["A", "explains_spread"]
    assert clean.loc["A", "node_p"] > 0.05 and clean.loc["A", "explains_spread"] == "nothing found"
    # pairing B got the same treatment in both studies
    assert planted.loc["B"].equals(clean.loc["B"])


def test_a_drift_over_time_is_found_by_run_order_and_start_time() -> None:
    drifted = _table(study(drift=0.04))
    clean = _table(study())
    for pairing in ("A", "B"):
        assert drifted.loc[pairing, "start_time_p"] < 0.01 and drifted.loc[pairing, "run_order_p"] < 0.01
        assert drifted.loc[pairing, "start_time_rho"] > 0.5
        assert clean.loc[pairing, "start_time_p"] > 0.05


def test_the_numbers_are_scipys_on_scores_centred_within_task() -> None:
    frame = study(node_effect=0.02)
    table = _table(frame)
    a = frame[frame["pairing"] == "A"].copy()
    a["centred"] = a["holdout_score"] - a.groupby("task")["holdout_score"].transform("mean")
    groups = [g["centred"].to_numpy() for _, g in a.groupby("node")]
    f = sps.f_oneway(*groups)
    assert table.loc["A", "node_f"] == pytest.approx(f.statistic)
    between = sum(len(g) * (g.mean() - a["centred"].mean()) ** 2 for g in groups)
    assert table.loc["A", "node_share"] == pytest.approx(
        between / ((a["centred"] - a["centred"].mean()) ** 2).sum()
    )
    assert table.loc["A", "node_null_share"] == pytest.approx(2 / 59, abs=0.01)  # (g - 1) / (n - 1)
    times = a["started_at"].map(lambda t: t.timestamp())
    assert table.loc["A", "start_time_rho"] == pytest.approx(sps.spearmanr(times, a["centred"]).statistic)


def test_every_report_has_the_section_and_says_why_when_it_cannot(tmp_path: Path) -> None:
    paths = build_report(study(node_effect=0.02), tmp_path / "r", seed=0)
    assert "placement" in paths.tables
    md = paths.markdown.read_text()
    assert (
        "## Where and when runs ran" in md
        and "A: where or when a run ran explains part of the spread: node" in md
    )
    bare = study().drop(columns=["node", "slot", "run_order", "started_at"])
    md = build_report(bare, tmp_path / "bare", seed=0).markdown.read_text()
    assert ("Skipped: needs the node each run ran on or the slot each run ran in or the order runs started in or "
            "when each run started, and these runs have none (column node or slot or run_order or started_at)") in md


def test_start_times_are_read_from_timestamps_iso_text_and_seconds() -> None:
    frame = pd.DataFrame(
        {
            "pairing": ["A"] * 3,
            "task": ["t"] * 3,
            "repeat": [1, 2, 3],
            "holdout_score": [0.7] * 3,
            "started_at": ["2026-11-30T10:00:00+00:00", "2026-11-30T10:00:00", "1796032800"],
        }
    )
    assert validate_runs(frame)["started_at"].tolist() == [1796032800.0] * 3
    with pytest.raises(Exception, match="column 'started_at', row 1: expected an ISO 8601 time"):
        validate_runs(frame.assign(started_at=["noon", "", ""]))
