"""Real runs: definitions filed before `sbx study run`, two same-seed arms and a different-seed control of the
same agent, then `sbx diverge` pairs them with the seeds and config hashes the lifecycle recorded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _sbx(*args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "--log-level", "warning", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, f"sbx {' '.join(args)}: {proc.stderr[-3000:]}"
    return proc.stdout


def test_filed_definitions_real_runs_and_the_pair_check(
    tmp_path: Path, small_flight_data: Path, built_images
) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    spec = tmp_path / "paired.yaml"
    spec.write_text(
        "name: paired\nrepeats: 2\ndatasets: [holdout]\npairings:\n  - agent: noop\n"
        "  - {agent: noop, label: noop-b, seed_as: noop}\n  - {agent: noop, label: noop-c}\n"
        "backend: {type: local, slots: 2}\n"
    )
    defs = tmp_path / "defs.yaml"
    defs.write_text(
        "agreement: {kind: score, pass_threshold: 0.6}\nthresholds: {min_at_risk: 1, n_resamples: 200}\n"
    )
    plan = json.loads(_sbx("diverge", "plan", str(spec), str(defs), "--json", env=env))
    assert plan["version"] == 1 and plan["preregistered"] and plan["first_run_started"] is None
    _sbx("study", "run", str(spec), "--data-dir", str(small_flight_data), "--report", env=env)
    doc = json.loads(
        _sbx("diverge", "paired", "--arms", "noop", "noop-b", "--control", "noop-c", "--json", env=env)
    )
    assert doc["definitions_used"]["preregistered"] is True and doc["stored_id"] == 1
    assert doc["pair_check"]["counts"] == {
        "main: seeds equal, configs equal": 2,
        "control: seeds different, configs equal": 2,
    }
    analysis = doc["analysis"]
    assert analysis["check"]["same_seed"] == 2 and analysis["check"]["different_seed"] == 2
    assert analysis["check"]["config_unchecked"] == 0 and not analysis["check"]["excluded"]
    table = analysis["outcome_table"]["value"]
    assert table["both"] == 2 and table["disagreement"] == 0.0  # the starting code scores the same every time
    assert analysis["hazard"]["skipped"] == "no eligible same-seed pair has compared transcripts"
    assert [c["pairing"] for c in analysis["placement"]["value"]] == ["A", "B"]
    # the study's own report checks node, slot, order and time for every pairing
    summary = (tmp_path / "home" / "reports" / "paired" / "summary.md").read_text()
    assert "## Where and when runs ran" in summary
