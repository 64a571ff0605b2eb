"""Fixtures for whole runs: a ledger in a temporary SBX_HOME and a helper that runs one agent to its end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agents import command_agent, resolve_agent
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.specs import Budget, load_budget, load_task

AGENTS = Path(__file__).resolve().parents[1] / "sandbox" / "agents"

#: small enough that a hostile agent crosses every limit within seconds on one core
HOSTILE_BUDGET: dict[str, Any] = dict(
    name="hostile", cpu_seconds=6, hard_stop_cpu_seconds=15, experiments=40, experiment_timeout_s=20, cores=1,
    memory_mb=768, pids=256, wall_clock_minutes=3, stall_seconds=90, disk_mb=256,
)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A stand-in prepared data set: only its manifest, which is what a run's config hash reads of it."""
    d = tmp_path / "data"
    d.mkdir()
    (d / "manifest.json").write_text('{"files": {"train.csv": "aa"}}')
    return d


@pytest.fixture
def sbx_home(home: Home) -> Path:
    return home.root


@pytest.fixture
def ledger(home: Home) -> Iterator[Ledger]:
    with Ledger(home.ledger_path) as led:
        yield led


@pytest.fixture
def run_agent(docker_client, built_images, home: Home, ledger: Ledger,
              small_flight_data: Path) -> Callable[..., dict[str, Any]]:
    """Run `agent` (a file in tests/sandbox/agents, or a built-in name) through the sandbox phase (no
    scoring) and return its ledger record. `request` changes fields of the RunRequest (copy_limits, ...)."""

    def run(agent: str, budget: Budget | None = None, request: dict[str, Any] | None = None,
            **budget_changes: Any) -> dict[str, Any]:
        spec = command_agent(AGENTS / agent) if (AGENTS / agent).exists() else resolve_agent(agent)
        b = budget or Budget(**{**HOSTILE_BUDGET, **budget_changes})
        req = RunRequest(task=load_task("flight-delays"), budget=b, agent=spec, data_dir=small_flight_data,
                         datasets=(), **(request or {}))
        lifecycle = RunLifecycle(home, ledger, docker_client)
        run_id = lifecycle.run(req, lifecycle.plan(req)).run_id
        return ledger.run_record_json(run_id)

    return run


@pytest.fixture
def smoke_budget() -> Budget:
    return load_budget("smoke")
