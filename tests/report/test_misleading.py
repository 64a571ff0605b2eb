"""The eight outputs issue 21 found misleading, each pinned by a test the old report fails, and the report's
independence from the order of the input's rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orchestrator.report import build_report, validate_runs
from orchestrator.report.placement import _adjust, verdicts
from orchestrator.report.prepare import prepare
from orchestrator.report.tables import (
    compliance_table,
    exclusion_sensitivity_table,
    later_table,
    pairing_table,
)
from orchestrator.specs.study import ReportSpec
from orchestrator.stats import Exclusion

from .conftest import make_ml_study


def _prep(frame: pd.DataFrame, settings: ReportSpec | None = None):
    return prepare(validate_runs(frame), Exclusion.BOTH, seed=0, settings=settings)


def _runs(n: int = 6, **extra: object) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = [
        {"pairing": p, "task": "t", "repeat": r, "holdout_score": 0.74 + rng.normal(0, 0.01),
         "eval_labels_in_fit": "clear", "frame_statistics": "clear", **extra}
        for p in ("a/x", "b/x")
        for r in range(n)
    ]
    return pd.DataFrame(rows)


def test_1_an_unscorable_run_is_not_counted_compliant() -> None:
    # audited clear but its code could not be scored: the old compliance table counted it compliant (148
    # against the pairings table's 144 in the reference study)
    runs = _runs()
    runs.loc[0, "holdout_score"] = None
    prep = _prep(runs)
    comp = compliance_table(prep).set_index("pairing")
    pairs = pairing_table(prep, n_resamples=100).set_index("pairing")
    assert comp.loc["a/x", "compliant"] == pairs.loc["a/x", "compliant"] == 5
    assert comp.loc["a/x", "unscorable"] == 1


def test_an_unanalysable_or_unknown_verdict_is_counted_apart_and_never_compliant() -> None:
    runs = _runs()
    runs.loc[0, "eval_labels_in_fit"] = "unanalysable"  # by default excluded, like a flag (stats/exclusion.py)
    comp = compliance_table(_prep(runs)).set_index("pairing")
    assert comp.loc["a/x", "eval_labels_in_fit_unanalysable"] == 1
    assert comp.loc["a/x", "eval_labels_in_fit_clear"] == 5 and comp.loc["a/x", "eval_labels_in_fit_other"] == 0
    assert comp.loc["a/x", "compliant"] == 5 and comp.loc["a/x", "excluded"] == 1
    runs.loc[0, "eval_labels_in_fit"] = "some-future-verdict"  # a word sbx does not know yet: unknown
    comp = compliance_table(_prep(runs)).set_index("pairing")
    assert comp.loc["a/x", "eval_labels_in_fit_other"] == 1 and comp.loc["a/x", "eval_labels_in_fit_unanalysable"] == 0
    assert comp.loc["a/x", "compliant"] == 5 and comp.loc["a/x", "unknown"] == 1


def test_2_reference_levels_are_named_or_sorted_never_the_first_row() -> None:
    study = make_ml_study(runs=12)
    flipped = study.iloc[::-1].reset_index(drop=True)  # "claude" rows first
    assert _prep(study).levels("agent") == _prep(flipped).levels("agent") == ["claude", "codex"]
    named = ReportSpec(reference={"agent": "codex", "model": "m-mid"})
    assert _prep(flipped, named).levels("agent") == ["codex", "claude"]
    assert _prep(flipped, named).levels("model") == ["m-mid", "m-large", "m-small"]
    with pytest.raises(ValueError, match="reference level 'gpt' of agent"):
        _prep(study, ReportSpec(reference={"agent": "gpt"})).levels("agent")


def test_2_every_table_is_the_same_whatever_the_row_order(tmp_path: Path) -> None:
    # the old report changed 18 of 41 tables (the Holm p among them) when the same runs were shuffled
    study = make_ml_study(runs=10)
    rng = np.random.default_rng(0)
    study["node"] = [f"n{i % 3}" for i in range(len(study))]
    study["slot"] = [f"s{i % 2}" for i in range(len(study))]
    study["run_order"] = range(len(study))
    settings = ReportSpec(baseline={"holdout_score": 0.72, "later_score": 0.71}, budget_cpu_seconds=18_000)
    a = build_report(study, tmp_path / "a", seed=3, settings=settings)
    b = build_report(study.iloc[rng.permutation(len(study))], tmp_path / "b", seed=3, settings=settings)
    assert set(a.tables) == set(b.tables) and len(a.tables) >= 25
    changed = [name for name in a.tables if a.tables[name].read_bytes() != b.tables[name].read_bytes()]
    assert changed == []


def test_3_placement_verdicts_are_holm_adjusted_over_the_report() -> None:
    # 18 tests, one at p = 0.0385: chance alone gives that; the old text said "node explains part of the spread"
    rows = []
    for i in range(5):
        rows.append({"pairing": f"p{i}", "node_p": 0.0385 if i == 0 else 0.6, "slot_p": 0.5, "run_order_p": 0.4,
                     "start_time_p": np.nan if i < 3 else 0.7, "node_share": 0.2, "node_null_share": 0.1,
                     "slot_share": 0.1, "slot_null_share": 0.1, "run_order_rho": 0.1, "start_time_rho": 0.1})
    frame = _adjust(pd.DataFrame(rows), 0.05)
    assert frame.attrs["tests"] == 17
    assert frame.loc[0, "node_p_holm"] == pytest.approx(min(1.0, 17 * 0.0385))
    text = verdicts(frame)
    assert text[0].startswith("17 tests in this table, Holm-adjusted")
    assert not any("explains part of the spread" in t for t in text)
    strong = _adjust(pd.DataFrame([{**rows[0], "node_p": 0.0001}] + rows[1:]), 0.05)
    assert "node" in strong.loc[0, "explains_spread"] and "explains part" in verdicts(strong)[1]


def test_4_a_rule_never_audited_is_not_read_as_nobody_compliant() -> None:
    runs = _runs().drop(columns=["frame_statistics"])
    t = exclusion_sensitivity_table(_prep(runs))
    never = t[t["exclusion"].isin(("frame_statistics", "both"))]
    assert never["compliant"].isna().all() and (never["note"] == "not audited: frame_statistics").all()
    assert (t.loc[t["exclusion"] == "eval_labels_in_fit", "compliant"] == 6).all()


def test_5_imported_spend_is_not_said_to_be_measured_by_the_gateway(tmp_path: Path) -> None:
    study = make_ml_study(runs=5)
    imported = build_report(study, tmp_path / "csv", seed=0).markdown.read_text()
    assert "measured by the model gateway" not in imported and "as given in the runs table" in imported
    ledger = build_report(study, tmp_path / "ledger", seed=0, costs_from_gateway=True).markdown.read_text()
    assert "measured by the model gateway" in ledger


def test_8_the_later_period_gives_each_periods_gain_over_the_starting_code() -> None:
    # the starting code scores 0.005 higher on the later data; the runs score 0.003 higher there: "later
    # minus holdout" (+0.003, the old column) reads as a gain, while the gain over the starting code fell
    runs = _runs()
    runs["later_score"] = runs["holdout_score"] + 0.003
    plain = later_table(_prep(runs))
    assert "mean_change" not in plain.columns and "gain_later" not in plain.columns
    t = later_table(_prep(runs, ReportSpec(baseline={"holdout_score": 0.72, "later_score": 0.725}))).set_index("pairing")
    row = t.loc["all"]
    assert row["gain_later"] == pytest.approx(row["gain_score"] - 0.002)
    assert row["share_of_gain_kept"] == pytest.approx(row["gain_later"] / row["gain_score"]) and row["share_of_gain_kept"] < 1
