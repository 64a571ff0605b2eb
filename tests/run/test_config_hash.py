"""The config hash of a run: what makes two runs the same configuration, and what does not."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from orchestrator.agents import command_agent, resolve_agent
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run import RunRequest
from orchestrator.run.config_hash import (
    HASHED,
    NOT_HASHED,
    config_differences,
    config_hash,
    config_meta,
    run_config,
)
from orchestrator.run.context import RunContext
from orchestrator.run.lifecycle import prepare
from orchestrator.sandbox.copyout import CopyLimits
from orchestrator.scoring.options import ScoreOptions
from orchestrator.specs import load_budget, load_task

IMAGE = "sha256:" + "ab" * 32


def _request(data: Path, **changes: object) -> RunRequest:
    req = RunRequest(
        task=load_task("flight-delays"),
        budget=load_budget("smoke"),
        agent=resolve_agent("noop"),
        data_dir=data,
        model="m1",
    )
    return dataclasses.replace(req, **changes)


def test_every_request_field_is_either_hashed_or_named_as_not_configuration() -> None:
    fields = {f.name for f in dataclasses.fields(RunRequest)}
    assert fields == HASHED | NOT_HASHED and not HASHED & NOT_HASHED


def test_identity_seed_and_placement_leave_the_hash_alone(data_dir: Path) -> None:
    base = config_hash(run_config(_request(data_dir), IMAGE))
    for changes in (
        {"pairing": "B"},
        {"study_id": "s-1"},
        {"repeat": 3},
        {"seed": 99},
        {"cpuset": "1"},
        {"slot": 2},
        {"node": "n7"},
        {"meta": {"order": 4}},
        {"score_options": ScoreOptions(cpuset="1")},
        {"copy_limits": CopyLimits()},  # the defaults: hashes made before copy_limits existed still match
    ):
        assert config_hash(run_config(_request(data_dir, **changes), IMAGE)) == base, changes


def test_what_changes_a_run_changes_the_hash_and_the_difference_is_named(
    data_dir: Path, tmp_path: Path
) -> None:
    base = run_config(_request(data_dir), IMAGE)
    other_data = tmp_path / "other"
    other_data.mkdir()
    (other_data / "manifest.json").write_text('{"files": {"train.csv": "bb"}}')
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    cases = {
        "model": ({"model": "m2"}, IMAGE),
        "agent_options.temperature": ({"agent_options": {"temperature": 0.5}}, IMAGE),
        "budget.cpu_seconds": (
            {"budget": load_budget("smoke").model_copy(update={"cpu_seconds": 1.0})},
            IMAGE,
        ),
        "data_sha256": ({"data_dir": other_data}, IMAGE),
        "image": ({}, "sha256:" + "cd" * 32),
        "datasets": ({"datasets": ("holdout", "later")}, IMAGE),
        "score_options.seed": ({"score_options": ScoreOptions(seed=1)}, IMAGE),
        "agent.command": ({"agent": command_agent(script)}, IMAGE),
        "copy_limits": ({"copy_limits": CopyLimits(timeout_s=8)}, IMAGE),
    }
    for where, (changes, image) in cases.items():
        changed = run_config(_request(data_dir, **changes), image)
        assert config_hash(changed) != config_hash(base), where
        assert where in config_differences(base, changed), (where, config_differences(base, changed))


def test_the_agent_file_and_the_task_repo_are_hashed_by_content(data_dir: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    before = run_config(_request(data_dir, agent=command_agent(script)), IMAGE)
    script.write_text("#!/bin/sh\nexit 1\n")
    after = run_config(_request(data_dir, agent=command_agent(script)), IMAGE)
    assert config_differences(before, after) == ["agent.file_sha256"]
    task = load_task("flight-delays")
    assert before["task"]["repo_sha256"] is not None and before["task"]["spec"]["name"] == task.name


def test_two_homes_with_the_same_data_give_the_same_hash(tmp_path: Path) -> None:
    # paths differ between machines; the content is what counts
    one, two = tmp_path / "a" / "flights", tmp_path / "b" / "flights"
    for d in (one, two):
        d.mkdir(parents=True)
        (d / "manifest.json").write_text('{"same": true}')
    assert config_hash(run_config(_request(one), IMAGE)) == config_hash(run_config(_request(two), IMAGE))


@pytest.mark.docker
def test_prepare_records_seed_and_config_hash_in_the_run_meta(
    docker_client, built_images, home: Home, small_flight_data: Path
) -> None:
    req = _request(small_flight_data, seed=1234)
    with Ledger(home.ledger_path) as ledger:
        run_id = ledger.new_run(task="flight-delays", agent="noop", budget_name="smoke", meta={"order": 0})
        prepared = prepare(RunContext(home, ledger, docker_client, req, run_id))
        meta = ledger.get_run(run_id).meta
    assert meta["order"] == 0 and meta["seed"] == 1234
    assert meta == {"order": 0, "task_kind": "ml", "task_path": str(req.task.root), **config_meta(req, prepared.image)}
    assert meta["config_hash"] == config_hash(meta["config"]) and meta["config"]["image"] == prepared.image
