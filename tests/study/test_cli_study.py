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
    done = _sbx("study", "run", str(spec), "--data-dir", str(small_flight_data), "--report", env=env)
    # the study ends with a short result table per pairing and the report's path
    assert "mean_holdout" in done.stdout and "count_features" in done.stdout and "report: " in done.stdout
    assert (tmp_path / "home" / "studies" / "tiny" / "driver.log").stat().st_size > 0  # the full structured log

    status = json.loads(_sbx("study", "status", "tiny", "--json", env=env).stdout)
    assert status["runs"] == 4 and status["running_pid"] is None
    assert status["pairings"] == {"count_features": {"done": 2}, "noop": {"done": 2}}

    out = tmp_path / "runs.parquet"
    _sbx("export", "tiny", "--format", "parquet", "--out", str(out), env=env)
    runs = pd.read_parquet(out)
    assert len(runs) == 4 and set(runs["pairing"]) == {"noop", "count_features"}
    for column in ("pairing", "repeat", "status", "failure_class", "counted", "cpu_seconds_metered", "experiments_counted",
                   "holdout_score", "later_score", "eval_labels_in_fit", "frame_statistics", "batch_dependent",
                   "started_at", "ended_at", "node", "slot"):
        assert column in runs.columns
    assert runs["holdout_score"].between(0.5, 0.9).all() and runs["later_score"].between(0.5, 0.9).all()
    breaker = runs[runs["pairing"] == "count_features"]
    assert (breaker["frame_statistics"] == "flagged").all() and breaker["batch_dependent"].all()
    assert (runs[runs["pairing"] == "noop"]["frame_statistics"] == "clear").all()
    csv = tmp_path / "runs.csv"
    _sbx("export", "tiny", "--out", str(csv), env=env)
    from_csv = pd.read_csv(csv)
    assert len(from_csv) == 4
    assert pd.Timestamp(from_csv["started_at"].iloc[0]).tzinfo is not None  # ISO 8601 with an offset

    report = tmp_path / "home" / "reports" / "tiny" / "report.html"
    assert report.is_file() and "count_features" in report.read_text()

    shown = json.loads(_sbx("show", runs["run_id"].iloc[0], "--json", env=env).stdout)
    # one record of a run: every export column is a key of `sbx show --json`, with the same value
    assert set(runs.columns) <= set(shown)
    row = runs.iloc[0]
    for key in ("holdout_score", "cpu_seconds_metered", "status", "frame_statistics", "experiments_counted"):
        assert row[key] == shown[key], key
    for key in ("resources", "events", "experiments", "scores", "audits"):
        assert key in shown
    assert shown["resources"]["network"] == "none" and shown["image"].startswith("sha256:")

    # the study left nothing behind (scoped: containers other tests left on this engine are not its own)
    gc = _sbx("gc", "--study", "tiny", env=env).stdout
    assert gc.startswith("removed leftovers of 0 runs")


def test_sbx_run_prints_the_run_id_and_show_has_the_scores(tmp_path: Path, small_flight_data: Path, built_images) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    run_id = _sbx("run", "--agent", "noop", "--data-dir", str(small_flight_data), env=env).stdout.strip()
    assert run_id.startswith("r-")
    shown = json.loads(_sbx("show", run_id, "--json", env=env).stdout)
    assert shown["status"] == "audited" and shown["failure_class"] is None
    assert 0.5 < shown["holdout_score"] < 0.9 and shown["batch_dependent"] is False
    assert {a["rule"]: a["final_verdict"] for a in shown["audits"]} == {
        "eval_labels_in_fit": "clear", "frame_statistics": "clear", "eval_features_in_fit": "clear"}
    assert shown["compliant"] is True
    steps = [e["detail"]["step"] for e in shown["events"] if e["kind"] == "step"]
    assert steps == ["prepare", "sandbox", "agent", "final_readings", "copy_out", "evaluate", "audit"]
    assert shown["experiments_counted"] == 0 and shown["commits"] == 1


def test_exit_codes_of_a_failed_run_and_of_a_config_error(tmp_path: Path, small_flight_data: Path,
                                                          built_images) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    crash = tmp_path / "crash.sh"
    crash.write_text("#!/bin/sh\necho giving up\nexit 3\n")
    crash.chmod(0o755)
    failed = _sbx("run", "--agent-command", str(crash), "--data-dir", str(small_flight_data), "--json", env=env,
                  check=False)
    assert failed.returncode == 1, failed.stderr[-2000:]  # the agent failed: the thing checked failed
    record = json.loads(failed.stdout)
    assert (record["status"], record["failure_class"]) == ("failed", "agent")

    empty = tmp_path / "no-data"
    empty.mkdir()
    bad = _sbx("run", "--agent", "noop", "--data-dir", str(empty), env=env, check=False)
    assert bad.returncode == 2 and "train.csv: missing" in bad.stderr  # names the file to fix
    runs = json.loads(_sbx("study", "status", "adhoc", "--json", env=env).stdout)
    assert runs["attempts"] == 2  # the refused run is on record (cancelled), not left planned or retried


def test_a_config_error_stops_a_study_and_is_never_retried(tmp_path: Path, built_images) -> None:
    """A data error inside a run leaves it planned (no attempt is used up), stops the study with exit 2, and
    the same study runs once the data is there."""
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    spec = tmp_path / "cfg.yaml"
    spec.write_text("name: cfg\nrepeats: 2\npairings:\n  - agent: noop\nbackend: {type: local, slots: 1}\n"
                    "infra_retries: 2\n")
    empty = tmp_path / "no-data"
    empty.mkdir()
    proc = _sbx("study", "run", str(spec), "--data-dir", str(empty), env=env, check=False)
    assert proc.returncode == 2 and "train.csv: missing" in proc.stderr, proc.stderr[-2000:]
    status = json.loads(_sbx("study", "status", "cfg", "--json", env=env).stdout)
    assert status["attempts"] == 2 and status["pairings"] == {"noop": {"planned": 2}}  # nothing retried or failed
