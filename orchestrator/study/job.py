"""One job of a study, executed where its slot is: the run lifecycle (orchestrator/run) on that slot.

A job carries its task and budget as the driver validated them (`validated_inputs`): the slot runs those,
after checking their digests, never a copy it finds under the same name."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path, PurePosixPath
from typing import Any

import docker

from orchestrator.agents import command_agent, resolve_agent
from orchestrator.failures import DataError
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.scoring.options import ScoreOptions
from orchestrator.specs import Budget, TaskSpec, load_budget
from orchestrator.specs.judge import JudgeSpec
from orchestrator.specs.task import TestsTaskSpec, load_any_task, task_data_dir
from orchestrator.study.backend import JobResult, RunJob, Slot
from orchestrator.tasks.bundle import pack_task, unpack_task


def budget_digest(spec: dict[str, Any]) -> str:
    """The digest of a budget's validated spec (its JSON dump)."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def validated_inputs(task: str, budget: str) -> dict[str, Any]:
    """What a job carries of its task and budget, loaded and validated here (the driver): the task's bundle
    and the budget's spec, each with its digest (RunJob's `task_bundle`, `budget_spec`, `budget_digest`)."""
    spec = load_budget(budget).model_dump(mode="json")
    return {"task_bundle": pack_task(load_any_task(task)), "budget_spec": spec, "budget_digest": budget_digest(spec)}


def job_task(job: RunJob, cache: Path | None = None) -> TaskSpec | TestsTaskSpec:
    """The task a job runs: the bundle it carries, checked against this node's cache copy (module
    tasks/bundle.py), else (a job built without one) the task of that name here."""
    if job.task_bundle is None:
        return load_any_task(job.task)
    # a study names its task by name or by folder (a user's own task): the bundle is that task's or that folder's
    named = job.task in (job.task_bundle.name, job.task_bundle.task_dir)
    if not named and PurePosixPath(job.task).name != PurePosixPath(job.task_bundle.task_dir).name:
        raise DataError(f"job {job.run_id}: it carries task {job.task_bundle.name!r} for a run of {job.task!r}")
    if cache is None:
        from orchestrator.tasks.environment import default_cache

        cache = default_cache()
    return unpack_task(job.task_bundle, cache)


def job_budget(job: RunJob) -> Budget:
    """The budget a job runs under: the spec it carries, its digest checked, else the budget of that name."""
    if job.budget_spec is None:
        return load_budget(job.budget)
    found = budget_digest(job.budget_spec)
    if found != job.budget_digest:
        raise DataError(f"job {job.run_id}: budget {job.budget} is sha256:{found}, but the job says "
                        f"sha256:{job.budget_digest}; refusing it")
    return Budget.model_validate(job.budget_spec)


def job_judge(job: RunJob, task: TaskSpec | TestsTaskSpec) -> JudgeSpec | None:
    """The judge a job's run is graded by: the spec it carries, its digest checked (a node whose JudgeSpec
    reads it otherwise would record another judge's digest), else the task's own."""
    if job.judge is None:
        return task.judge
    spec = JudgeSpec.model_validate(job.judge)
    if job.judge_digest is not None and spec.digest() != job.judge_digest:
        raise DataError(f"job {job.run_id}: judge {spec.name} is sha256:{spec.digest()} here, but the job says "
                        f"sha256:{job.judge_digest}; refusing it")
    return spec


def job_request(home: Home, job: RunJob, slot: Slot, task: TaskSpec | TestsTaskSpec | None = None) -> RunRequest:
    """The run request of a study job on `slot` (scoring stays on the slot's cores too); `task`: the job's
    task when the caller already unpacked it."""
    task, budget = task or job_task(job), job_budget(job)
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
        judge=job_judge(job, task),
    )


def execute_job(home: Home, client: docker.DockerClient, ledger: Ledger, job: RunJob, slot: Slot,
                gateway: GatewayHost | None = None, cancel: threading.Event | None = None,
                task: TaskSpec | TestsTaskSpec | None = None) -> JobResult:
    """Run (or finish) one attempt on `slot`, recording everything in `ledger`; runs that talk to a model go
    through `gateway` (the host's); `cancel` stops it (the attempt then ends failed/infra, or a delivered run
    stays delivered)."""
    start = time.monotonic()
    record = RunLifecycle(home, ledger, client, gateway=gateway, cancel=cancel).run(
        job_request(home, job, slot, task), job.run_id)
    refusing = job.endpoint if job.endpoint and gateway is not None and gateway.refusing(job.endpoint) else None
    return JobResult(run_id=job.run_id, status=str(record.status), failure_class=record.failure_class,
                      failure_reason=record.failure_reason, slot=slot.label, seconds=time.monotonic() - start,
                      cpu_seconds=record.cpu_seconds_container, endpoint_refusing=refusing)
