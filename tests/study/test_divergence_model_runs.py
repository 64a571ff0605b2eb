"""Real runs through the gateway: a study of a scripted tool-calling agent against the seeded stand-in, with
two same-seed arms and a different-seed control; `sbx diverge` compares the transcripts the runs stored, and
every pair's first divergence and class equal what the stand-in logged for its runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# runs with a model endpoint come with the agents integration (orchestrator/run/model_attachment.py)
pytest.importorskip(
    "orchestrator.run.model_attachment", reason="needs model endpoints in runs (branch agents-run)"
)

from orchestrator.model import Scenario  # noqa: E402
from tests.diverge.gateway_runs import SCENARIO  # noqa: E402
from tests.run.standin_setup import KEY_ENV, MODEL, standin_gateway  # noqa: E402

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENT = Path(__file__).parent / "agents" / "tool_loop.py"


def _sbx(*args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "--log-level", "warning", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    assert proc.returncode == 0, f"sbx {' '.join(args)}: {proc.stderr[-4000:]}"
    return proc.stdout


def test_stored_transcripts_of_real_runs_match_the_stand_ins_ground_truth(
    tmp_path: Path, small_flight_data: Path, built_images
) -> None:
    pairing = f"agent_command: {AGENT}, model: {MODEL}, endpoint: standin-chat"
    spec = tmp_path / "seeded.yaml"
    spec.write_text(
        f"name: seeded\nrepeats: 3\ndatasets: [holdout]\nbackend: {{type: local, slots: 2}}\npairings:\n"
        f"  - {{{pairing}, label: A}}\n  - {{{pairing}, label: B, seed_as: A}}\n"
        f"  - {{{pairing}, label: C}}\n"
    )
    defs = tmp_path / "defs.yaml"
    defs.write_text(
        "agreement: {kind: score, pass_threshold: 0.6}\nthresholds: {min_at_risk: 1, n_resamples: 200}\n"
    )
    with standin_gateway(tmp_path / "model", Scenario.model_validate(SCENARIO)) as setup:
        env = {**os.environ, "SBX_HOME": str(tmp_path / "home"), KEY_ENV: os.environ[KEY_ENV]}
        files = ["--endpoints", str(setup.endpoints_file), "--ratecards", str(setup.ratecards_dir)]
        _sbx("diverge", "plan", str(spec), str(defs), env=env)
        _sbx("study", "run", str(spec), *files, "--data-dir", str(small_flight_data), env=env)
        doc = json.loads(_sbx("diverge", "seeded", "--arms", "A", "B", "--control", "C", "--json", env=env))
        played = {}
        for check in doc["pair_check"]["pairs"]:
            for run_id in (check["run_a"], check["run_b"]):
                played[run_id] = [(c["step"], c["variant"]) for c in setup.calls(run_id)]
    assert doc["definitions_used"]["preregistered"] is True and not doc["problems"]
    assert doc["pair_check"]["counts"] == {
        "main: seeds equal, configs equal": 3,
        "control: seeds different, configs equal": 3,
    }
    analysis = doc["analysis"]
    assert analysis["check"]["without_comparison"] == 0 and not analysis["check"]["excluded"]
    # the same seed plays the same variants: every same-seed pair is identical once ids are normalised
    assert analysis["divergence_classes"]["value"]["identical"] == 3
    # every pair first differs where the stand-in first played another variant for its two runs, as a response
    assert doc["stored_id"] == 1 and len(doc["pairs"]) == 6
    diverged = 0
    for pair in doc["pairs"]:
        a, b = played[pair["run_a"]], played[pair["run_b"]]
        assert len(a) == len(b) == 7 and pair["calls_a"] == pair["calls_b"] == 7
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), None)
        assert pair["first_divergence"] == first, pair
        assert pair["divergence_class"] == (None if first is None else "response")
        if pair["same_seed"]:
            assert first is None  # the same seed plays the same variants: identical once ids are normalised
        diverged += first is not None
    assert diverged >= 1, "the control arm's seeds make the stand-in play other variants somewhere"
