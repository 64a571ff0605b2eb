"""The report's cost section (report/tables.py): cost per pairing, per scored run and per compliant run, the
cached share of input, and the gap between each CLI's own usage report and the gateway's, checked by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orchestrator.report import build_report, validate_runs
from orchestrator.report.cost_tables import cost_table, self_report_gap_table
from orchestrator.report.prepare import prepare
from orchestrator.stats import Exclusion

ROWS = [
    # pairing, repeat, holdout, eval_labels_in_fit, cost, input, cached, output, reported input, output, cost, counted
    ("claude-code/m", 1, 0.70, "clear", 0.10, 1000, 600, 50, 1000, 50, 0.16, True),
    ("claude-code/m", 2, 0.72, "flagged", 0.20, 2000, 1500, 80, 2000, 80, 0.31, True),
    ("claude-code/m", 3, None, None, 0.30, 3000, 2000, 90, None, None, None, True),     # failed: no score
    ("claude-code/m", 3, None, None, 0.05, 500, 0, 10, 500, 10, 0.07, False),            # infra attempt
    ("codex/m", 1, 0.69, "clear", 0.40, 4000, 3000, 100, 4400, 100, None, True),
    ("codex/m", 2, 0.71, "clear", 0.60, 6000, 3000, 140, 6600, 140, None, True),
]


def _runs() -> pd.DataFrame:
    cols = ["pairing", "repeat", "holdout_score", "eval_labels_in_fit", "cost_usd", "input_tokens",
            "cached_input_tokens", "output_tokens", "reported_input_tokens", "reported_output_tokens",
            "reported_cost_usd", "counted"]
    frame = pd.DataFrame(ROWS, columns=cols)
    frame["task"] = "flight-delays"
    frame["frame_statistics"] = frame["eval_labels_in_fit"].map(lambda v: None if v is None else "clear")
    return validate_runs(frame)


def test_cost_per_scored_and_per_compliant_run_divide_the_whole_spend() -> None:
    table = cost_table(prepare(_runs(), Exclusion.BOTH, seed=0)).set_index("pairing")
    claude, codex = table.loc["claude-code/m"], table.loc["codex/m"]
    # the infra attempt is not counted; the failed run's spend is (it was paid for)
    assert claude["runs"] == 3 and claude["total_cost_usd"] == pytest.approx(0.60)
    assert claude["scored_runs"] == 2 and claude["cost_per_scored_run_usd"] == pytest.approx(0.30)
    assert claude["compliant_runs"] == 1 and claude["cost_per_compliant_run_usd"] == pytest.approx(0.60)
    assert claude["cached_share"] == pytest.approx(4100 / 6000)
    assert codex["cost_per_scored_run_usd"] == pytest.approx(0.50) == codex["cost_per_compliant_run_usd"]
    assert codex["cached_share"] == pytest.approx(0.6)


def test_the_self_report_gap_is_against_the_gateways_count_of_the_same_runs() -> None:
    table = self_report_gap_table(prepare(_runs(), Exclusion.BOTH, seed=0)).set_index("pairing")
    claude, codex = table.loc["claude-code/m"], table.loc["codex/m"]
    # the failed run printed no report: it is left out of both sums
    assert (claude["runs_input"], claude["gateway_input"], claude["reported_input"]) == (2, 3000, 3000)
    assert claude["gap_input"] == 0.0
    assert claude["gap_cost"] == pytest.approx((0.47 - 0.30) / 0.30)       # its own list-price estimate
    assert codex["gap_input"] == pytest.approx(0.10) and codex["gap_output"] == 0.0
    assert codex["runs_cost"] == 0 and np.isnan(codex["gap_cost"])        # Codex reports no cost


def test_the_report_has_both_tables(tmp_path: Path) -> None:
    paths = build_report(_runs(), tmp_path, seed=0)
    assert {"cost", "self_report_gap"} <= set(paths.tables)
    cost = pd.read_csv(paths.tables["cost"])
    assert {"cost_per_scored_run_usd", "cost_per_compliant_run_usd", "cached_share"} <= set(cost.columns)
    html = paths.html.read_text()
    assert "own usage reports against the gateway" in html and "cost_per_compliant_run_usd" in html


def test_list_price_cache_price_and_the_cache_counterfactual_by_hand() -> None:
    from orchestrator.report import validate_runs
    from orchestrator.report.prepare import prepare
    from orchestrator.specs.study import ReportSpec
    from orchestrator.stats import Exclusion

    runs = pd.DataFrame([
        {"pairing": "pi/m", "model": "m", "task": "t", "repeat": r, "holdout_score": 0.74, "cost_usd": c,
         "input_tokens": 1e6, "cached_input_tokens": 9e5, "output_tokens": 1e4}
        for r, c in enumerate((0.05, 0.10))
    ] + [
        {"pairing": "cc/m", "model": "m", "task": "t", "repeat": r, "holdout_score": 0.74, "cost_usd": c,
         "input_tokens": 4e6, "cached_input_tokens": 4e5, "output_tokens": 2e4}
        for r, c in enumerate((1.0, 3.0))
    ])
    card = {"name": "card", "date": "2026-09-11", "prices": {"m": {"input": 0.5, "output": 2.0, "cached_input": 0.05}}}
    prep = prepare(validate_runs(runs), Exclusion.BOTH, seed=0, settings=ReportSpec(rate_card=card))
    t = cost_table(prep).set_index("pairing")
    assert t.loc["cc/m", "list_price_cost_per_run_usd"] == pytest.approx(4 * 0.5 + 0.02 * 2.0)
    assert t.loc["cc/m", "cached_price_cost_per_run_usd"] == pytest.approx(3.6 * 0.5 + 0.4 * 0.05 + 0.02 * 2.0)
    # cc's own tokens at pi's cached share (90%): 0.4M uncached at 0.5, 3.6M cached at 0.05, output as is
    assert t.loc["cc/m", "cost_at_best_cached_share_usd"] == pytest.approx(0.4 * 0.5 + 3.6 * 0.05 + 0.02 * 2.0)
    assert t.loc["cc/m", "cost_max_over_min_run"] == pytest.approx(3.0) and t.loc["pi/m", "cost_over_cheapest"] == 1
    assert t.loc["cc/m", "cost_over_cheapest"] == pytest.approx(2.0 / 0.075)


def test_repricing_the_ledger_by_hand() -> None:
    from orchestrator.report import validate_runs
    from orchestrator.report.cost_tables import repricing_table
    from orchestrator.report.prepare import prepare
    from orchestrator.specs.study import ReportSpec
    from orchestrator.stats import Exclusion

    runs = pd.DataFrame([
        {"pairing": f"a/{m}", "model": m, "task": "t", "repeat": 1, "holdout_score": 0.74,
         "input_tokens": tin, "output_tokens": tout, "reasoning_tokens": tr}
        for m, tin, tout, tr in (("m1", 2e6, 1e4, 5e3), ("m2", 1e6, 2e4, 0))
    ])
    settings = ReportSpec(
        rate_card={"name": "card", "date": "2026-09-16", "prices": {"m1": {"input": 0.1, "output": 0.3, "cached_input": 0.02},
                                                                     "m2": {"input": 0.2, "output": 0.6, "cached_input": 0.01}}},
        reprice_at={"big": {"input": 5.0, "output": 25.0, "cached_input": 0.5}, "no cache": {"input": 30, "output": 180}},
    )
    t = repricing_table(prepare(validate_runs(runs), Exclusion.BOTH, seed=0, settings=settings)).set_index("prices")
    as_run = t.loc["as run (card, 2026-09-16)"]
    assert as_run["ledger_usd"] == pytest.approx(2 * 0.1 + 0.015 * 0.3 + 1 * 0.2 + 0.02 * 0.6)
    assert as_run["if_90%_cached_usd"] == pytest.approx(2 * (0.01 + 0.018) + 0.015 * 0.3 + (0.02 + 0.009) + 0.02 * 0.6)
    assert t.loc["big", "ledger_usd"] == pytest.approx(3 * 5.0 + 0.035 * 25.0)
    assert t.loc["big", "if_90%_cached_usd"] == pytest.approx(3 * (0.5 + 0.45) + 0.035 * 25.0)
    assert np.isnan(t.loc["no cache", "if_90%_cached_usd"])  # an unlisted cached price is not a zero price
