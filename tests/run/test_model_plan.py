"""The prepare step of runs that talk to a model (run/model_plan.py): what is checked before the run's state
changes, each problem a ConfigError naming the fix, and what a run with a model gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.agents import resolve_agent
from orchestrator.failures import ConfigError, ImageNotBuilt
from orchestrator.run import RunRequest
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.run.model_plan import MODEL_ENV, STDOUT_KEEP, prepare_model
from orchestrator.specs import load_budget, load_task
from tests.run.standin_setup import KEY_ENV, MODEL, write_model_files

SANDBOX = "sha256:" + "0" * 64


@pytest.fixture
def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(KEY_ENV, "sk-some-key")
    endpoints, cards = write_model_files(tmp_path, "http://127.0.0.1:9")
    host = GatewayHost.from_files(endpoints, cards)
    yield host
    host.stop()


def _request(agent: str, **kw) -> RunRequest:
    return RunRequest(task=load_task("flight-delays"), budget=load_budget("smoke"), agent=resolve_agent(agent),
                      data_dir=Path("/nonexistent"), **kw)


def test_a_run_without_a_model_is_left_as_it_is(gateway: GatewayHost) -> None:
    prep = prepare_model(_request("noop"), None, gateway, SANDBOX)  # type: ignore[arg-type]
    assert prep.plan is None and prep.image == SANDBOX and prep.agent == resolve_agent("noop")


def test_a_scripted_agent_with_an_endpoint_gets_the_models_environment(gateway: GatewayHost) -> None:
    prep = prepare_model(_request("hpo", model=MODEL, endpoint="standin-responses"), None, gateway, SANDBOX)  # type: ignore[arg-type]
    assert prep.image == SANDBOX and prep.agent.command == ("python", "/agent/hpo.py")
    plan = prep.plan
    assert plan is not None and (plan.endpoint, plan.api, plan.model, plan.launch) == (
        "standin-responses", "openai-responses", MODEL, None)
    assert plan.env() == {"SBX_MODEL_BASE_URL": "http://127.0.0.1:4000", "SBX_MODEL_API": "openai-responses",
                          "SBX_MODEL_NAME": MODEL, "SBX_MODEL_API_KEY": "sbx-dummy-key"}
    assert plan.env().keys() == MODEL_ENV.keys()


@pytest.mark.parametrize(("kw", "error"), [
    ({}, "agent codex talks to a model: give it a model and an endpoint"),
    ({"model": MODEL}, "give it a model and an endpoint"),
    ({"endpoint": "standin-responses"}, "give it a model and an endpoint"),
    ({"model": MODEL, "endpoint": "standin-chat"},
     "agent codex speaks openai-responses, but endpoint standin-chat is openai-chat: pick an endpoint"),
    ({"model": "gpt-9", "endpoint": "standin-responses"}, "does not list model 'gpt-9'"),
])
def test_a_cli_agent_needs_a_model_and_an_endpoint_it_can_speak_to(gateway: GatewayHost, kw: dict, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        prepare_model(_request("codex", **kw), None, gateway, SANDBOX)  # type: ignore[arg-type]


def test_an_endpoint_needs_a_gateway(gateway: GatewayHost) -> None:
    with pytest.raises(ConfigError, match="no model gateway was started for it"):
        prepare_model(_request("noop", model=MODEL, endpoint="standin-chat"), None, None, SANDBOX)  # type: ignore[arg-type]


@pytest.mark.docker
def test_a_cli_agent_whose_image_is_not_built_is_a_config_error(gateway: GatewayHost, docker_client) -> None:
    with pytest.raises(ImageNotBuilt, match=r"not built for the current inputs: run `sbx images build --agents pi`"):
        prepare_model(_request("pi", model=MODEL, endpoint="standin-chat"), docker_client, gateway, SANDBOX)


@pytest.mark.docker
def test_a_cli_agent_runs_in_its_image_with_its_adapters_command(gateway: GatewayHost, docker_client,
                                                                  sandbox_image: str, agent_image) -> None:
    built = agent_image("claude-code")
    sandbox_id = docker_client.images.get(sandbox_image).id
    prep = prepare_model(_request("claude-code", model=MODEL, endpoint="standin-anthropic"), docker_client, gateway,
                         sandbox_id)
    assert prep.image == built.image_id and prep.agent.version == "2.1.332"
    assert prep.agent.command[:2] == ("bash", "-c") and f"tail -c {STDOUT_KEEP}" in prep.agent.command[2]
    plan = prep.plan
    assert plan is not None and plan.launch is not None and plan.agent_version == "2.1.332"
    env = plan.env()
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:4000" and env["ANTHROPIC_API_KEY"] == "sbx-dummy-key"
    assert env["ANTHROPIC_SMALL_FAST_MODEL"] == MODEL
