"""Runs with a model endpoint, in real sandboxes: a scripted agent gets the model's environment and a dummy key;
a run that ends on its provider's errors is our loss (failed/infra, not counted) and the endpoint is marked
refusing; the gateway's limits are the budget's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.agents import command_agent
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.model import Fault
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.run.record import full_record
from orchestrator.specs import load_task
from orchestrator.specs.budget import Budget
from tests.run.conftest import HOSTILE_BUDGET
from tests.run.standin_setup import MODEL, standin_gateway

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENT = Path(__file__).parent / "agents" / "model_once.py"
ATTACKS = Path(__file__).parent / "attacks" / "round2.py"


def _request(data: Path, **changes) -> RunRequest:
    budget = Budget(**{**HOSTILE_BUDGET, **changes.pop("budget", {})})
    changes = {"agent": command_agent(AGENT), "datasets": (), **changes}
    return RunRequest(task=load_task("flight-delays"), budget=budget, data_dir=data, model=MODEL,
                      endpoint="standin-chat", **changes)


def test_a_run_that_ends_on_provider_errors_is_infra_and_the_endpoint_refuses(
        docker_client, built_images, home: Home, tmp_path: Path, small_flight_data: Path) -> None:
    with standin_gateway(tmp_path / "model") as setup, Ledger(home.ledger_path) as ledger:
        setup.standin.faults.extend([Fault(status=529), Fault(status=429, retry_after="7"), Fault(status=503)])
        req = _request(small_flight_data, agent_options={"calls": 3})
        lifecycle = RunLifecycle(home, ledger, docker_client, gateway=setup.host)
        run_id = lifecycle.plan(req)
        record = lifecycle.run(req, run_id)
        usage = ledger.usage.of_run(run_id)
        errors = ledger.events(run_id, "model.provider_error")
        assert setup.host.refusing("standin-chat")
        health = setup.host.health("standin-chat")
    assert record.status == "failed" and record.failure_class == "infra" and not record.counted
    # cause first: which endpoint, at which address, the last call's error
    assert record.failure_reason.startswith(f"ProviderFailure: endpoint standin-chat at {setup.base_url} answered "
                                            "with errors (upstream answered 503); 3 of 3 calls failed")
    assert usage is not None and usage.closed and (usage.calls, usage.provider_errors, usage.ok) == (3, 3, 0)
    assert [e.detail["status"] for e in errors] == [529, 429, 503]
    assert health.consecutive_failures == 3
    log = (home.run_dir(run_id) / "agent.log").read_text()
    assert log.count("STATUS 5") == 2 and "STATUS 429" in log


def test_a_scripted_agent_with_an_endpoint_gets_the_model_environment_and_budget_limits(
        docker_client, built_images, home: Home, tmp_path: Path, small_flight_data: Path) -> None:
    with standin_gateway(tmp_path / "model") as setup, Ledger(home.ledger_path) as ledger:
        req = _request(small_flight_data, agent_options={"calls": 4}, budget={"model_calls": 3})
        lifecycle = RunLifecycle(home, ledger, docker_client, gateway=setup.host)
        run_id = lifecycle.plan(req)
        record = lifecycle.run(req, run_id)
        usage = ledger.usage.of_run(run_id)
        refused = [e.detail for e in ledger.events(run_id, "model.refused")]
        opened = ledger.events(run_id, "model.opened")[0].detail
    log = (home.run_dir(run_id) / "agent.log").read_text()
    # the 4th call crosses model_calls = 3: refused in OpenAI's own shape for a spent quota, with an event
    assert log.count("STATUS 200") == 3 and "STATUS 429" in log
    assert record.status == "failed" and record.failure_class == "agent"  # the agent exited 1: its own doing
    assert usage is not None and (usage.calls, usage.ok, usage.refused) == (4, 3, 1)
    assert refused == [{"reason": "model_calls", "message": "sbx: this run's model_calls limit (3) is spent",
                        "index": 3, "status": 429}]
    assert opened["limits"]["calls"] == 3 and opened["endpoint"] == "standin-chat"
    env_line = next(line for line in log.splitlines() if line.startswith("ENV "))
    assert env_line == ('ENV {"SBX_MODEL_API": "openai-chat", "SBX_MODEL_API_KEY": "sbx-dummy-key", '
                        '"SBX_MODEL_BASE_URL": "http://127.0.0.1:4000", "SBX_MODEL_NAME": "sbx-standin"}')


def test_sbx_run_refuses_a_cli_agent_without_a_usable_endpoint(built_images, tmp_path: Path, small_flight_data: Path,
                                                               capsys: pytest.CaptureFixture) -> None:
    from orchestrator.cli import main

    with standin_gateway(tmp_path / "model") as setup:
        base = ["--home", str(tmp_path / "home"), "run", "--data-dir", str(small_flight_data), "--no-score"]
        files = ["--endpoints", str(setup.endpoints_file), "--ratecards", str(setup.ratecards_dir)]
        assert main([*base, "--agent", "claude-code"]) == 2
        assert "agent claude-code talks to a model: give it a model and an endpoint" in capsys.readouterr().err
        assert main([*base, "--agent", "codex", "--model", MODEL, "--endpoint", "standin-chat", *files]) == 2
        assert "agent codex speaks openai-responses, but endpoint standin-chat is openai-chat" in capsys.readouterr().err
        assert main([*base, "--agent", "codex", "--model", MODEL, "--endpoint", "nope", *files]) == 2
        assert "no endpoint named 'nope'" in capsys.readouterr().err
    with Ledger(tmp_path / "home" / "ledger.sqlite") as ledger:
        runs = ledger.list_runs()
        usage = [ledger.usage.of_run(r.run_id) for r in runs]
    # each attempt was planned, then cancelled before anything started; none talked to a model
    assert [r.status for r in runs] == ["cancelled"] * 3 and usage == [None] * 3


def test_the_scorer_of_a_model_run_meets_its_model_path_closed(
        docker_client, built_images, home: Home, tmp_path: Path, small_flight_data: Path) -> None:
    """train.py probes the model path (socket, direct connect, a call on the forwarder's port) in its
    experiment and writes what it saw; the scorer's retraining fails if it sees anything else. The one call
    the budget allows is the agent's: the experiment's probe is refused by the run's gateway, the scorer's by
    its closed model path, and neither reaches the model."""
    with standin_gateway(tmp_path / "model") as setup, Ledger(home.ledger_path) as ledger:
        budget = {"cpu_seconds": 60, "hard_stop_cpu_seconds": 120, "experiment_timeout_s": 30, "memory_mb": 2048,
                  "wall_clock_minutes": 5, "model_calls": 1}
        req = _request(small_flight_data, agent=command_agent(ATTACKS), agent_options={"attack": "scorer_detect_model"},
                       budget=budget, datasets=("holdout",))
        lifecycle = RunLifecycle(home, ledger, docker_client, gateway=setup.host)
        run_id = lifecycle.plan(req)
        lifecycle.run(req, run_id)
        record = full_record(ledger, run_id)
        usage = ledger.usage.of_run(run_id)
        calls = setup.calls(run_id)
    assert record["status"] == "audited", record["failure_reason"]
    (exp,) = [x for x in record["experiments"] if x["status"] == "ok"]
    score = record["scores"]["holdout"]
    assert score["status"] == "scored" and score["fresh_check"] == "agreed"   # both containers saw the same
    assert score["eval_score_reported"] == exp["eval_score"]
    seen = json.loads((home.delivered_dir(run_id) / "workspace" / "probe.json").read_text())
    assert seen["socket"] == [True, "0o600", 990] and seen["direct"] == "PermissionError"
    assert seen["port"][0] == "HTTP/1.1 429 Too Many Requests"
    assert json.loads(seen["port"][-1])["error"] == {
        "message": "sbx: this run's model_calls limit (1) is spent", "type": "insufficient_quota", "param": None,
        "code": "insufficient_quota"}
    # the model saw the agent's one call; the gateway the agent's and the experiment's (refused): nothing more
    assert len(calls) == 1
    assert usage is not None and (usage.calls, usage.ok, usage.refused) == (2, 1, 1)
