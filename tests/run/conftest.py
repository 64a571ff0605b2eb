"""Fixtures for whole runs: a ledger in a temporary SBX_HOME and a helper that runs one agent to its end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agents import command_agent, resolve_agent
from orchestrator.ledger import Ledger
from orchestrator.run.execute import RunRequest, execute_run
from orchestrator.specs import Budget, load_budget, load_task

AGENTS = Path(__file__).resolve().parents[1] / "sandbox" / "agents"

#: small enough that a hostile agent crosses every limit within seconds on one core
HOSTILE_BUDGET: dict[str, Any] = dict(
    name="hostile", cpu_seconds=6, hard_stop_cpu_seconds=15, experiments=40, experiment_timeout_s=20, cores=1,
    memory_mb=768, pids=256, wall_clock_minutes=3, stall_seconds=90, disk_mb=256,
)


@pytest.fixture
def sbx_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SBX_HOME", str(tmp_path / "sbx"))
    return tmp_path / "sbx"


@pytest.fixture
def ledger(sbx_home: Path) -> Iterator[Ledger]:
    with Ledger(sbx_home / "ledger.sqlite") as led:
        yield led


@pytest.fixture
def run_agent(docker_client, built_images, ledger: Ledger, small_flight_data: Path) -> Callable[..., dict[str, Any]]:
    """Run `agent` (a file in tests/sandbox/agents, or a built-in name) and return its ledger record."""

    def run(agent: str, budget: Budget | None = None, **budget_changes: Any) -> dict[str, Any]:
        spec = command_agent(AGENTS / agent) if (AGENTS / agent).exists() else resolve_agent(agent)
        b = budget or Budget(**{**HOSTILE_BUDGET, **budget_changes})
        req = RunRequest(task=load_task("flight-delays"), budget=b, agent=spec, image=built_images["sandbox"].image_id,
                         data_dir=small_flight_data)
        run_id = execute_run(docker_client, ledger, req)
        return ledger.run_record_json(run_id)

    return run


@pytest.fixture
def smoke_budget() -> Budget:
    return load_budget("smoke")
