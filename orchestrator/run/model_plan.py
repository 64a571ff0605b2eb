"""The `prepare` step of a run that talks to a model: check everything before the run's state changes.

A run talks to a model when its agent is a CLI agent (claude-code, codex, ...; it must name a model and an
endpoint) or when a scripted agent is given an endpoint (it then gets `SBX_MODEL_*` in its environment).
Everything a user can fix is a ConfigError here, naming the fix, and leaves the run `planned`: an unknown
endpoint, an unreadable key, a model the endpoint does not list, no rate card pricing the model on the
run's date, a wire API the CLI does not speak, an agent image not built for the current inputs.

For a CLI agent the run's command is made here: the adapter's headless command for the pairing's model,
pointed at the sandbox's forwarder with a dummy key, in the agent's image (`sbx-agent-NAME:<hash>`), whose
`sbx.agent.version` label names the version the ledger records.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

import docker

from orchestrator.agents import AgentSpec
from orchestrator.agents.adapters import DUMMY_KEY, Launch, ModelTarget, get_adapter
from orchestrator.failures import ConfigError
from orchestrator.gateway import forwarder
from orchestrator.images.agents import resolve_agent_image
from orchestrator.paths import images_root
from orchestrator.run.gateway_host import GatewayHost, ModelTargetCheck
from orchestrator.run.request import RunRequest

#: the loopback port the forwarder listens on in every sandbox
PORT = forwarder.DEFAULT_PORT
#: the tail of a CLI's stdout kept apart from its stderr for its usage report (its final report is at the end)
STDOUT_KEEP = 16 * 1024 * 1024
#: the environment a scripted agent with an endpoint gets (a CLI agent gets its adapter's instead, too)
MODEL_ENV = {
    "SBX_MODEL_BASE_URL": "the model's root inside the sandbox (the forwarder), no /v1: http://127.0.0.1:4000",
    "SBX_MODEL_API": "the wire API: anthropic, openai-chat or openai-responses",
    "SBX_MODEL_NAME": "the pairing's model",
    "SBX_MODEL_API_KEY": "a dummy key (the gateway knows the run from its socket and holds the real key)",
}


@dataclass(frozen=True)
class ModelPlan:
    """What the run's model attachment needs: where calls go, what they cost, and the CLI's launch."""

    endpoint: str
    api: str
    model: str
    run_date: dt.date
    rate_card_date: dt.date
    agent_version: str | None
    #: a CLI agent's launch (config files, report files); None for a scripted agent with an endpoint
    launch: Launch | None

    def env(self) -> dict[str, str]:
        env = {"SBX_MODEL_BASE_URL": forwarder.base_url(PORT), "SBX_MODEL_API": self.api,
               "SBX_MODEL_NAME": self.model, "SBX_MODEL_API_KEY": DUMMY_KEY}
        assert env.keys() == MODEL_ENV.keys()
        return env | (dict(self.launch.env) if self.launch is not None else {})


@dataclass(frozen=True)
class ModelPrep:
    image: str              # the image the sandbox runs (the agent's own image for a CLI agent)
    agent: AgentSpec        # the agent with its command for this run
    plan: ModelPlan | None  # None: the run talks to no model


def check_model_pairing(agent: AgentSpec, model: str | None, endpoint: str | None,
                        check: Callable[[str, str], ModelTargetCheck]) -> ModelTargetCheck | None:
    """A pairing's model side, checked before anything runs (a run's prepare step, `sbx study plan`): a CLI
    agent names a model and an endpoint; the endpoint passes `check(endpoint, model)` (exists, key readable,
    model listed, priced); a CLI agent speaks the endpoint's API. None when the pairing talks to no model."""
    if agent.kind != "cli" and endpoint is None:
        return None
    if endpoint is None or not model:
        raise ConfigError(f"agent {agent.name} talks to a model: give it a model and an endpoint "
                          "(`sbx run --model M --endpoint E`; a pairing's `model:` and `endpoint:`)")
    found = check(endpoint, model)
    if agent.kind == "cli":
        adapter = get_adapter(agent.name)
        if found.endpoint.api not in adapter.wire_apis:
            raise ConfigError(f"agent {agent.name} speaks {', '.join(adapter.wire_apis)}, but endpoint {endpoint} "
                              f"is {found.endpoint.api}: pick an endpoint of one of those APIs")
    return found


def prepare_model(req: RunRequest, client: docker.DockerClient, gateway: GatewayHost | None,
                  sandbox_image: str) -> ModelPrep:
    """Check a run's model, endpoint, rate card and agent image; make a CLI agent's command (module docstring)."""
    agent = req.agent
    if agent.kind != "cli" and req.endpoint is None:
        return ModelPrep(sandbox_image, agent, None)
    if gateway is None and req.endpoint is not None:
        raise ConfigError(f"run with endpoint {req.endpoint}: no model gateway was started for it "
                          "(RunLifecycle(..., gateway=GatewayHost.from_files(...)))")
    run_date = dt.datetime.now(dt.UTC).date()
    # check is called only with an endpoint, and an endpoint without a gateway raised above
    found = check_model_pairing(agent, req.model, req.endpoint,
                                lambda name, model: gateway.check(name, model, run_date))  # type: ignore[union-attr]
    assert found is not None and req.endpoint is not None and req.model is not None
    api = found.endpoint.api
    if agent.kind != "cli":
        return ModelPrep(sandbox_image, agent, ModelPlan(req.endpoint, api, req.model, run_date,
                                                         found.rate_card_date, None, None))
    adapter = get_adapter(agent.name)
    image = resolve_agent_image(client, agent.name, sandbox_image, images_root() / "agents")
    version = (image.labels or {}).get("sbx.agent.version") or adapter.version
    launch = adapter.launch(ModelTarget(forwarder.base_url(PORT), req.model, api))
    launched = agent.launched(launch.shell(keep_stdout=STDOUT_KEEP), {}, version)
    return ModelPrep(image.id, launched, ModelPlan(req.endpoint, api, req.model, run_date, found.rate_card_date,
                                                   version, launch))


__all__ = ["MODEL_ENV", "PORT", "STDOUT_KEEP", "ModelPlan", "ModelPrep", "check_model_pairing", "prepare_model"]
