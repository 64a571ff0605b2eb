"""The agent registry: built-ins by name, executables by path, and the environment every agent gets."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from orchestrator import paths
from orchestrator.agents import AGENT_ENV, BUILTINS, agent_environment, command_agent, resolve_agent
from orchestrator.failures import ConfigError
from orchestrator.specs import load_budget

DOCS = Path(__file__).resolve().parents[2] / "docs" / "agents.md"


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtins_resolve_to_shipped_scripts(name: str) -> None:
    spec = resolve_agent(name)
    assert spec.kind == "builtin" and spec.name == name
    assert spec.host_path.is_file() and spec.host_path.suffix == ".py"
    # a program that runs in the sandbox: kept with the others the host never imports
    assert spec.host_path.parent == paths.INCONTAINER_DIR / "agents"
    assert spec.command == ("python", f"/agent/{spec.host_path.name}")
    assert spec.volumes() == {str(spec.host_path): {"bind": spec.container_path, "mode": "ro"}}


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="known: count_features, eval_concat, hpo, noop"):
        resolve_agent("claude-cod")


def test_command_agent_resolves_symlinks_and_checks_the_file(tmp_path: Path) -> None:
    script = tmp_path / "my agent.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    link = tmp_path / "link"
    link.symlink_to(script)
    spec = resolve_agent(str(link))
    assert spec.kind == "command" and spec.host_path == script.resolve()
    assert spec.command == ("/agent/agent-command",)  # the odd file name is not used inside
    tidy = tmp_path / "agent.py"
    tidy.write_text("")
    tidy.chmod(0o755)
    assert command_agent(tidy).command == ("/agent/agent.py",)
    with pytest.raises(ConfigError, match="cannot use it"):
        resolve_agent(str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="not a regular file"):
        resolve_agent(str(tmp_path))
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ConfigError, match="not a regular file"):
        command_agent(tmp_path / "fifo")
    tidy.chmod(0o700)
    with pytest.raises(ConfigError, match="chmod a\\+rx"):
        command_agent(tidy)


def test_agent_environment_is_the_documented_one() -> None:
    env = agent_environment(run_id="r1", task="flight-delays", budget=load_budget("smoke"),
                            experiment_socket="/run/sbx/experiments.sock", seed=7)
    assert set(env) == set(AGENT_ENV)
    assert env["SBX_WORKSPACE"] == "/workspace" and env["SBX_SEED"] == "7"
    assert env["SBX_BUDGET_EXPERIMENTS"] == "4" and env["SBX_WALL_CLOCK_S"] == "600"
    from orchestrator.run.model_plan import MODEL_ENV  # what runs with a model endpoint get besides

    documented = set(re.findall(r"^\| `(SBX_[A-Z_]+)` \|", DOCS.read_text(), re.MULTILINE))
    assert documented == set(AGENT_ENV) | set(MODEL_ENV)


@pytest.mark.parametrize("name", ["claude-code", "codex", "opencode", "pi", "mini-swe-agent"])
def test_cli_agents_resolve_by_name_and_are_launched_per_run(name: str) -> None:
    from orchestrator.agents.adapters import get_adapter

    spec = resolve_agent(name)
    assert (spec.kind, spec.name, spec.version) == ("cli", name, get_adapter(name).version)
    assert spec.host_path is None and spec.volumes() == {} and spec.command == ()  # its image holds the CLI
    run = spec.launched(["bash", "-c", "exec claude"], {"A": "1"}, "9.9.9")
    assert (run.command, dict(run.env), run.version, run.kind) == (("bash", "-c", "exec claude"), {"A": "1"}, "9.9.9", "cli")
    assert spec.command == ()  # the resolved spec itself is unchanged


def test_unknown_name_lists_builtins_and_cli_agents() -> None:
    with pytest.raises(ConfigError, match="hpo, noop, oracle, claude-code, codex, mini-swe-agent, opencode, pi"):
        resolve_agent("claude")
