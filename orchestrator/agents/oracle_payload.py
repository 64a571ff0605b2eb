"""The `oracle` agent for tests tasks: incontainer/agents/oracle.py with the task's reference solution filled in.

It is an agent like any other: one file mounted read-only in the sandbox and run as the agent user, and
what it delivers is copied out and graded the same way. Only the per-run copy carries the solution, and
only into the sandbox of a run whose agent is the oracle; no other agent ever sees it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

from orchestrator import paths
from orchestrator.agents import BUILTIN_FOLDER, AgentSpec
from orchestrator.failures import ConfigError
from orchestrator.specs.task import TestsTaskSpec

ORACLE = "oracle"
_MARK = 'PAYLOAD = ""'


def oracle_payload(task: TestsTaskSpec) -> dict[str, str]:
    """What the oracle applies: the reference patch, else the solution script."""
    if task.reference_patch:
        return {"kind": "patch", "text": task.path(task.reference_patch).read_text()}
    if task.solution:
        return {"kind": "script", "text": task.path(task.solution).read_text()}
    raise ConfigError(f"task {task.name}: no reference_patch and no solution: the oracle has nothing to apply")


def oracle_for_task(agent: AgentSpec, task: TestsTaskSpec, folder: Path) -> AgentSpec:
    """The oracle `agent` as it runs on `task`: a copy of its script in `folder` with the solution in it."""
    template = paths.incontainer_source(f"{BUILTIN_FOLDER}/oracle.py")
    if template.count(_MARK) != 1:
        raise AssertionError("incontainer/agents/oracle.py must hold exactly one empty PAYLOAD line")
    blob = base64.b64encode(json.dumps(oracle_payload(task)).encode()).decode()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "oracle.py"
    path.write_text(template.replace(_MARK, f'PAYLOAD = "{blob}"'))
    path.chmod(0o644)
    return replace(agent, host_path=path)
