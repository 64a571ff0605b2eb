"""One job of a study, executed where its slot is: the run lifecycle (orchestrator/run) on that slot."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import docker

from orchestrator.agents import command_agent, resolve_agent
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.scoring.options import ScoreOptions
from orchestrator.specs import TaskSpec, load_budget
from orchestrator.specs.task import load_any_task, task_data_dir
from orchestrator.study.backend import RunJob, RunOutcome, Slot


def job_request(home: Home, job: RunJob, slot: Slot) -> RunRequest:
    """The run request of a study job on `slot` (scoring stays on the slot's cores too)."""
    task, budget = load_any_task(job.task), load_budget(job.budget)
    agent = command_agent(job.agent_command) if job.agent_command else resolve_agent(job.agent or "noop")
    if job.data_dir and isinstance(task, TaskSpec):
        data_dir = Path(job.data_dir)
    else:
        data_dir = task_data_dir(task, home)
    return RunRequest(
        task=task, budget=budget, agent=agent, data_dir=data_dir,
        study_id=job.study_id, pairing=job.pairing, model=job.model, endpoint=job.endpoint, repeat=job.repeat,
        seed=job.seed, cpuset=slot.cpuset, slot=slot.index, node=slot.node, agent_options=dict(job.options),
        datasets=job.datasets if task.kind == "ml" else (), score_options=ScoreOptions(cpuset=slot.cpuset),
    )


def execute_job(home: Home, client: docker.DockerClient, ledger: Ledger, job: RunJob, slot: Slot,
                gateway: GatewayHost | None = None, cancel: threading.Event | None = None) -> RunOutcome:
    """Run (or finish) one attempt on `slot`, recording everything in `ledger`; runs that talk to a model go
    through `gateway` (the host's); `cancel` stops it (the attempt then ends failed/infra, or a delivered run
    stays delivered)."""
    start = time.monotonic()
    record = RunLifecycle(home, ledger, client, gateway=gateway, cancel=cancel).run(job_request(home, job, slot),
                                                                                    job.run_id)
    refusing = job.endpoint if job.endpoint and gateway is not None and gateway.refusing(job.endpoint) else None
    return RunOutcome(run_id=job.run_id, status=str(record.status), failure_class=record.failure_class,
                      failure_reason=record.failure_reason, slot=slot.label, seconds=time.monotonic() - start,
                      cpu_seconds=record.cpu_seconds_container, endpoint_refusing=refusing)
