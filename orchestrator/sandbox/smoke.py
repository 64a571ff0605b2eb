"""Run a task's starting code once inside the sandbox image: the foundation's end-to-end check.

The container is the run's sandbox, built by the same function (`sandbox_container`, kind `smoke`), with
its workspace volume; no meter and no agent here (that is `sbx run`).
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import docker

from orchestrator.log import get_logger, timed
from orchestrator.sandbox.docker import DockerSandbox, SandboxSpec
from orchestrator.sandbox.process import ContainerProcess, TailBuffer
from orchestrator.sandbox.workspace import WORKSPACE, workspace_tar
from orchestrator.specs import Budget, TaskSpec

log = get_logger(__name__)
_OUTPUT = 64 << 10


@dataclass(frozen=True)
class SmokeResult:
    image: str
    eval_auc: float | None
    train_exit_code: int | None
    train_output: str
    validate_exit_code: int | None
    validate_output: str
    whoami: str
    interfaces: list[str]
    granted: dict[str, object]
    seconds: float


def _run(sandbox: DockerSandbox, cmd: list[str], limit_s: float) -> tuple[int | None, str]:
    assert sandbox.box is not None
    out = TailBuffer(_OUTPUT)
    proc = ContainerProcess(sandbox.box, cmd, user="agent", workdir=WORKSPACE, sink=out)
    proc.start()
    end = proc.wait(limit_s, on_timeout=sandbox.box.kill)
    return end.exit_code, out.text()


def run_starting_code(client: docker.DockerClient, image: str, task: TaskSpec, budget: Budget,
                      data_dir: Path) -> SmokeResult:
    tar, _ = workspace_tar(task, budget, branch="sbx/smoke", data_dir=data_dir)
    sandbox = DockerSandbox(client, SandboxSpec(f"smoke-{uuid.uuid4().hex[:8]}", image, budget,
                                                cpuset=None, sock_dir=None), kind="smoke")
    start = time.monotonic()
    try:
        sandbox.create(tar)
        sandbox.start()
        assert sandbox.box is not None
        with timed(log, "smoke.train", image=image):
            train_code, train_out = _run(sandbox, ["python", "train.py"], budget.experiment_timeout_s)
        validate_code, validate_out = _run(sandbox, ["./validate"], 60)
        _, whoami = _run(sandbox, ["id", "-u"], 10)
        _, nets = _run(sandbox, ["ls", "/sys/class/net"], 10)
        granted = sandbox.box.granted()
    finally:
        sandbox.remove()
    m = re.search(task.contract.eval_line, train_out)
    return SmokeResult(
        image=image, eval_auc=float(m.group(1)) if m else None, train_exit_code=train_code, train_output=train_out,
        validate_exit_code=validate_code, validate_output=validate_out, whoami=whoami.strip(),
        interfaces=sorted(nets.split()), granted=granted, seconds=time.monotonic() - start,
    )
