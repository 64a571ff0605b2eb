"""A small study over two agent CLIs, as a user runs it: `sbx study plan` checks every pairing's model side,
`sbx study run --report` runs them through one gateway against the stand-in, and the export and the report's
cost section carry the gateway's numbers (equal to the stand-in's own log) beside the CLIs' own reports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.run.standin_setup import KEY_ENV, MODEL, expected_cost, short_flight_delays, standin_gateway, truth

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _sbx(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], env=env, capture_output=True, text=True,
                          timeout=1200, check=False)
    assert proc.returncode == 0, f"sbx {' '.join(args)}: {proc.stderr[-4000:]}"
    return proc


def test_a_study_of_two_clis_fills_the_cost_section(tmp_path: Path, small_flight_data: Path, built_images,
                                                    agent_image) -> None:
    for name in ("claude-code", "codex"):
        agent_image(name)
    spec = tmp_path / "clis.yaml"
    spec.write_text(f"name: clis\nrepeats: 1\nbackend: {{type: local, slots: 2}}\npairings:\n"
                    f"  - {{agent: claude-code, model: {MODEL}, endpoint: standin-anthropic}}\n"
                    f"  - {{agent: codex, model: {MODEL}, endpoint: standin-responses}}\n")
    with standin_gateway(tmp_path / "model", short_flight_delays()) as setup:
        env = {**os.environ, "SBX_HOME": str(tmp_path / "home"), KEY_ENV: os.environ[KEY_ENV]}
        files = ["--endpoints", str(setup.endpoints_file), "--ratecards", str(setup.ratecards_dir)]
        plan = _sbx("study", "plan", str(spec), *files, env=env).stdout
        assert "claude-code/sbx-standin: endpoint standin-anthropic (anthropic), model sbx-standin" in plan
        assert "codex/sbx-standin: endpoint standin-responses (openai-responses)" in plan
        done = _sbx("study", "run", str(spec), *files, "--data-dir", str(small_flight_data), "--report", env=env)
        assert "report: " in done.stdout
        out = tmp_path / "runs.csv"
        _sbx("export", "clis", "--out", str(out), env=env)
        runs = pd.read_csv(out)
        stand_in = {r: setup.calls(r) for r in runs["run_id"]}
    assert set(runs["status"]) == {"audited"}, runs[["pairing", "status", "failure_reason"]]
    for _, row in runs.iterrows():
        calls = stand_in[row["run_id"]]
        t = truth(calls)
        assert (row["input_tokens"], row["cached_input_tokens"], row["output_tokens"], row["reasoning_tokens"],
                row["model_calls"]) == (t["input"], t["cached_input"], t["output"], t["reasoning"], len(calls))
        assert row["cost_usd"] == pytest.approx(expected_cost(calls), rel=1e-9)
        assert row["reported_input_tokens"] == t["input"] and row["endpoint"].startswith("standin-")
        assert row["agent_version"] in ("2.1.332", "0.171.0")
    report = tmp_path / "home" / "reports" / "clis"
    cost = pd.read_csv(report / "tables" / "cost.csv").set_index("pairing")
    for pairing, group in runs.groupby("pairing"):
        assert cost.loc[pairing, "total_cost_usd"] == pytest.approx(group["cost_usd"].sum())
        assert cost.loc[pairing, "cost_per_scored_run_usd"] == pytest.approx(group["cost_usd"].sum())
        assert cost.loc[pairing, "cached_share"] == pytest.approx(
            group["cached_input_tokens"].sum() / group["input_tokens"].sum())
    gap = pd.read_csv(report / "tables" / "self_report_gap.csv").set_index("pairing")
    assert (gap["gap_input"] == 0).all() and (gap["gap_output"] == 0).all()
    shown = json.loads(_sbx("show", runs["run_id"].iloc[0], "--json", env=env).stdout)
    assert shown["model_usage"]["closed"] and shown["model_usage"]["transcript_sha256"]
