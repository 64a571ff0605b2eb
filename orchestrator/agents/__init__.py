"""Agents: what runs inside the sandbox as the agent user, with the workspace as its working directory.

A scripted agent is one file on the host, mounted read-only at /agent/<file> and run with no network.
Built-ins are standalone Python scripts in `orchestrator/incontainer/agents/` (noop.py, hpo.py, ...), which
the host mounts and never imports;
`--agent-command PATH` names any executable of yours. A CLI agent (claude-code, codex, opencode, pi,
mini-swe-agent; `adapters/`) is installed in its own image and talks to its model through the run's
gateway; its command is filled in for the run's model when the run is prepared (`AgentSpec.launched`).
Every agent receives the environment in `AGENT_ENV` (see docs/agents.md).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from orchestrator import paths
from orchestrator.failures import ConfigError
from orchestrator.specs import Budget

AGENT_UID = 1000
AGENT_DIR = "/agent"
WORKSPACE = "/workspace"
#: where the built-in agents' scripts are, under orchestrator/incontainer/ (programs that run in a container)
BUILTIN_FOLDER = "agents"

#: built-in agents: name -> (script in orchestrator/incontainer/agents/, one line on what it does)
BUILTINS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "noop": ("noop.py", "delivers the starting code untouched"),
    "oracle": ("oracle.py", "tests tasks: applies the task's reference patch in the sandbox, like any agent"),
    "hpo": ("hpo.py", "seeded random search over XGBoost settings, one counted experiment per trial"),
    "eval_concat": ("eval_concat.py", "rule breaker: trains on train + eval rows (for demos and tests)"),
    "count_features": ("count_features.py", "rule breaker: count features from the scored batch (for demos and tests)"),
})

#: the environment every agent receives, variable -> meaning (docs/agents.md says the same)
AGENT_ENV: Mapping[str, str] = MappingProxyType({
    "SBX_RUN_ID": "this run's id (also in the ledger and on the container's labels)",
    "SBX_TASK": "the task's name, e.g. flight-delays",
    "SBX_BUDGET_CPU_SECONDS": "Python compute the run may spend, kernel CPU-seconds summed over cores",
    "SBX_BUDGET_EXPERIMENTS": "how many counted experiments ./run_experiment may run",
    "SBX_EXPERIMENT_TIMEOUT_S": "time limit of one experiment, in seconds",
    "SBX_WALL_CLOCK_S": "the run's wall clock, in seconds from the agent's start",
    "SBX_EXPERIMENT_SOCKET": "Unix socket of the host's experiment service (used by ./run_experiment)",
    "SBX_WORKSPACE": "the workspace, a git repository and the working directory: /workspace",
    "SBX_SEED": "an integer seed for anything the agent randomises",
    "SBX_AGENT_OPTIONS": "the pairing's `options` from the study file, as a JSON object ({} when none)",
})

_SAFE_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class AgentSpec:
    """One agent: the host file mounted read-only at `container_path` (none for a CLI agent, which its image
    holds), the argv that runs it there, and environment it needs beside `AGENT_ENV`.

    A CLI agent's `command` is empty until the run is prepared for its model (`launched`)."""

    name: str
    kind: Literal["builtin", "command", "cli"]
    host_path: Path | None
    container_path: str | None
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    #: the CLI's version (CLI agents: from the image's `sbx.agent.version` label, once prepared)
    version: str | None = None

    def volumes(self) -> dict[str, dict[str, str]]:
        """The read-only bind mount, in the docker SDK's `volumes=` form (none for a CLI agent)."""
        if self.host_path is None or self.container_path is None:
            return {}
        return {str(self.host_path): {"bind": self.container_path, "mode": "ro"}}

    def launched(self, command: Sequence[str], env: Mapping[str, str], version: str | None) -> AgentSpec:
        """This agent with the argv and environment of one run (a CLI agent, prepared for its model)."""
        return replace(self, command=tuple(command), env=MappingProxyType(dict(env)), version=version)


def cli_agent(name: str) -> AgentSpec:
    """A real agent CLI by name (an adapter in `adapters/`); its command is made when a run is prepared."""
    from orchestrator.agents.adapters import get_adapter

    adapter = get_adapter(name)
    return AgentSpec(name=adapter.name, kind="cli", host_path=None, container_path=None, command=(),
                     version=adapter.version)


def known_agents() -> list[str]:
    """Every agent name `resolve_agent` takes: the built-ins and the CLI adapters."""
    from orchestrator.agents.adapters import adapter_names

    return sorted(BUILTINS) + adapter_names()


def builtin_agent(name: str) -> AgentSpec:
    if name not in BUILTINS:
        raise ConfigError(f"unknown agent {name!r}; known: {', '.join(known_agents())} "
                          "(or --agent-command PATH for an executable of yours)")
    script = BUILTINS[name][0]
    inside = f"{AGENT_DIR}/{script}"
    return AgentSpec(name=name, kind="builtin", host_path=paths.incontainer_file(f"{BUILTIN_FOLDER}/{script}"),
                     container_path=inside,
                     command=("python", inside))


def command_agent(path: str | Path) -> AgentSpec:
    """An executable of yours: an existing regular file (symlinks resolved on the host) that the agent
    user (uid 1000) may read and execute. It is mounted read-only and run as /agent/<file>."""
    given = Path(path).expanduser()
    try:
        resolved = given.resolve(strict=True)
        st = os.stat(resolved)
    except (OSError, RuntimeError) as exc:
        raise ConfigError(f"--agent-command {given}: cannot use it: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"--agent-command {given}: not a regular file ({resolved})")
    if st.st_uid == AGENT_UID:
        need = stat.S_IRUSR | stat.S_IXUSR
    elif st.st_gid == AGENT_UID:
        need = stat.S_IRGRP | stat.S_IXGRP
    else:
        need = stat.S_IROTH | stat.S_IXOTH
    if st.st_mode & need != need:
        raise ConfigError(f"--agent-command {given}: the agent user (uid {AGENT_UID}) cannot read and execute "
                          f"{resolved} (mode {stat.filemode(st.st_mode)}); try chmod a+rx")
    file = resolved.name if _SAFE_FILE.match(resolved.name) else "agent-command"
    inside = f"{AGENT_DIR}/{file}"
    return AgentSpec(name=f"command:{resolved.name}", kind="command", host_path=resolved, container_path=inside,
                     command=(inside,))


def resolve_agent(name_or_path: str | Path) -> AgentSpec:
    """A built-in or a CLI agent by name, or an executable by path (anything with a slash, or starting with
    . or ~)."""
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or "/" in text or text.startswith((".", "~")):
        return command_agent(name_or_path)
    if text not in BUILTINS:
        from orchestrator.agents.adapters import adapter_names

        if text in adapter_names():
            return cli_agent(text)
    return builtin_agent(text)


def agent_environment(*, run_id: str, task: str, budget: Budget, experiment_socket: str, seed: int,
                      options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The environment of `AGENT_ENV`, filled in for one run (`experiment_socket` is the path inside)."""
    env = {
        "SBX_RUN_ID": run_id,
        "SBX_TASK": task,
        "SBX_BUDGET_CPU_SECONDS": f"{budget.cpu_seconds:g}",
        "SBX_BUDGET_EXPERIMENTS": str(budget.experiments),
        "SBX_EXPERIMENT_TIMEOUT_S": f"{budget.experiment_timeout_s:g}",
        "SBX_WALL_CLOCK_S": f"{budget.wall_clock_minutes * 60:g}",
        "SBX_EXPERIMENT_SOCKET": experiment_socket,
        "SBX_WORKSPACE": WORKSPACE,
        "SBX_SEED": str(int(seed)),
        "SBX_AGENT_OPTIONS": json.dumps(dict(options or {}), sort_keys=True),
    }
    assert env.keys() == AGENT_ENV.keys()
    return env


__all__ = ["AGENT_ENV", "BUILTINS", "AgentSpec", "agent_environment", "builtin_agent", "cli_agent", "command_agent",
           "known_agents", "resolve_agent"]
