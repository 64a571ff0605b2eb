"""Run a task's starting code once inside the sandbox image: the foundation's end-to-end check.

No meter and no agent here (that is `sbx run`); just the image, the workspace, no network, the agent user.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import docker

from orchestrator.failures import SbxError
from orchestrator.log import get_logger, timed
from orchestrator.sandbox.workspace import WORKSPACE, workspace_tar
from orchestrator.specs import Budget, TaskSpec

log = get_logger(__name__)


@dataclass(frozen=True)
class SmokeResult:
    image: str
    eval_auc: float | None
    train_exit_code: int
    train_output: str
    validate_exit_code: int
    validate_output: str
    whoami: str
    interfaces: list[str]
    seconds: float


def run_starting_code(
    client: docker.DockerClient, image: str, task: TaskSpec, budget: Budget, data_dir: Path | None = None
) -> SmokeResult:
    tar, _ = workspace_tar(task, budget, branch="sbx/smoke", data_dir=data_dir)
    name = f"sbx-smoke-{uuid.uuid4().hex[:8]}"
    start = time.monotonic()
    container = client.containers.create(
        image, ["sleep", "infinity"], name=name, user="agent", network_mode="none", init=True,
        cap_drop=["ALL"], security_opt=["no-new-privileges"], pids_limit=budget.pids,
        mem_limit=f"{budget.memory_mb}m", memswap_limit=f"{budget.memory_mb}m",
        nano_cpus=budget.cores * 1_000_000_000, labels={"sbx.kind": "smoke"},
    )
    try:
        if not container.put_archive(WORKSPACE, tar):
            raise SbxError(f"could not copy the workspace into {name}")
        container.start()
        with timed(log, "smoke.train", image=image):
            train = container.exec_run(["python", "train.py"], workdir=WORKSPACE, user="agent")
        validate = container.exec_run(["./validate"], workdir=WORKSPACE, user="agent")
        whoami = container.exec_run(["id", "-u"], user="agent").output.decode().strip()
        interfaces = sorted(container.exec_run(["ls", "/sys/class/net"], user="agent").output.decode().split())
    finally:
        container.remove(force=True)
    out = train.output.decode(errors="replace")
    m = re.search(task.contract.eval_line, out)
    return SmokeResult(
        image=image, eval_auc=float(m.group(1)) if m else None, train_exit_code=train.exit_code,
        train_output=out, validate_exit_code=validate.exit_code,
        validate_output=validate.output.decode(errors="replace"), whoami=whoami, interfaces=interfaces,
        seconds=time.monotonic() - start,
    )
