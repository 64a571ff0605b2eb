"""The study commands end to end, as a user types them: run, status, export, report, show, gc."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _sbx(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], env=env, capture_output=True, text=True,
                          timeout=900)
    if check:
        assert proc.returncode == 0, f"sbx {' '.join(args)}: {proc.stderr[-3000:]}"
    return proc


def test_study_run_status_export_report_and_show(tmp_path: Path, small_flight_data: Path, built_images) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    spec = tmp_path / "tiny.yaml"
    spec.write_text("name: tiny\nrepeats: 2\ndatasets: [holdout, later]\npairings:\n  - agent: noop\n"
                    "  - agent: count_features\nbackend: {type: local, slots: 2}\n")
    plan = _sbx("study", "plan", str(spec), env=env).stdout
    assert "2 pairings x 2 repeats = 4 runs" in plan
    _sbx("study", "run", str(spec), "--data-dir", str(small_flight_data), "--report", env=env)

    status = json.loads(_sbx("study", "status", "tiny", "--json", env=env).stdout)
    assert status["runs"] == 4 and status["running_pid"] is None
    assert status["pairings"] == {"count_features": {"done": 2}, "noop": {"done": 2}}

    out = tmp_path / "runs.parquet"
    _sbx("export", "tiny", "--format", "parquet", "--out", str(out), env=env)
    runs = pd.read_parquet(out)
    assert len(runs) == 4 and set(runs["pairing"]) == {"noop", "count_features"}
    for column in ("pairing", "repeat", "status", "failure_class", "counted", "cpu_seconds", "experiments_counted",
                   "holdout_score", "later_score", "eval_labels_in_fit", "frame_statistics", "batch_dependent",
                   "started_at", "ended_at", "node", "slot"):
        assert column in runs.columns
    assert runs["holdout_score"].between(0.5, 0.9).all() and runs["later_score"].between(0.5, 0.9).all()
    breaker = runs[runs["pairing"] == "count_features"]
    assert (breaker["frame_statistics"] == "flagged").all() and breaker["batch_dependent"].all()
    assert (runs[runs["pairing"] == "noop"]["frame_statistics"] == "clear").all()
    csv = tmp_path / "runs.csv"
    _sbx("export", "tiny", "--out", str(csv), env=env)
    assert len(pd.read_csv(csv)) == 4

    report = tmp_path / "home" / "reports" / "tiny" / "report.html"
    assert report.is_file() and "count_features" in report.read_text()

    shown = json.loads(_sbx("show", runs["run_id"].iloc[0], "--json", env=env).stdout)
    for key in ("run_id", "status", "failure_class", "cpu_seconds_metered", "cpu_seconds_container",
                "experiments_counted", "experiments_refused", "wall_seconds", "delivered_sha256", "commits", "image",
                "resources", "events", "holdout_auc", "holdout_ap", "holdout_auc_se", "batch_dependent",
                "scoring_error"):
        assert key in shown
    assert shown["resources"]["network"] == "none" and shown["image"].startswith("sha256:")

    gc = _sbx("gc", env=env).stdout
    assert gc.startswith("removed leftovers of 0 runs")


def test_sbx_run_prints_the_run_id_and_show_has_the_scores(tmp_path: Path, small_flight_data: Path, built_images) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    run_id = _sbx("run", "--agent", "noop", "--data-dir", str(small_flight_data), env=env).stdout.strip()
    assert run_id.startswith("r-")
    shown = json.loads(_sbx("show", run_id, "--json", env=env).stdout)
    assert shown["status"] == "audited" and shown["failure_class"] is None
    assert 0.5 < shown["holdout_auc"] < 0.9 and shown["batch_dependent"] is False
    assert shown["compliance"] == {"eval_labels_in_fit": "clear", "frame_statistics": "clear"}
    assert shown["experiments_counted"] == 0 and shown["commits"] == 1
