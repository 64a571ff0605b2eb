"""One job of a study, executed where its slot is: the run itself, then scoring and audit."""

from __future__ import annotations

import time
from pathlib import Path

import docker

from orchestrator.agents import command_agent, resolve_agent
from orchestrator.images import resolve_image
from orchestrator.ledger import Ledger, RunState
from orchestrator.log import get_logger
from orchestrator.run.execute import RunRequest, execute_run
from orchestrator.run.finish import score_and_audit, score_extra_dataset
from orchestrator.scoring.options import ScoreOptions
from orchestrator.specs import load_budget, load_task
from orchestrator.study.backend import RunJob, RunOutcome, Slot

log = get_logger(__name__)


def execute_job(client: docker.DockerClient, ledger: Ledger, job: RunJob, slot: Slot) -> RunOutcome:
    """Run (or finish) one attempt on `slot`, recording everything in `ledger`."""
    start = time.monotonic()
    task, budget = load_task(job.task), load_budget(job.budget)
    data_dir = Path(job.data_dir) if job.data_dir else None
    if job.phase == "run":
        agent = command_agent(job.agent_command) if job.agent_command else resolve_agent(job.agent or "noop")
        req = RunRequest(task=task, budget=budget, agent=agent, image=resolve_image(client, "sandbox").id,
                         study_id=job.study_id, pairing=job.pairing, model=job.model, repeat=job.repeat,
                         seed=job.seed, cpuset=slot.cpuset, data_dir=data_dir, slot=slot.index, node=slot.node)
        execute_run(client, ledger, req, run_id=job.run_id)
    # Scoring stays on the slot's cores, so parallel slots do not compete for CPUs.
    options = ScoreOptions(cpuset=slot.cpuset)
    record = ledger.get_run(job.run_id)
    if record.status == RunState.DELIVERED:
        score_and_audit(client, ledger, job.run_id, task, data_dir=data_dir, options=options)
    record = ledger.get_run(job.run_id)
    if record.status in (RunState.AUDITED, RunState.SCORED):
        for dataset in job.datasets:
            if dataset != "holdout":
                score_extra_dataset(client, ledger, job.run_id, task, dataset, data_dir=data_dir, options=options)
    record = ledger.get_run(job.run_id)
    return RunOutcome(run_id=job.run_id, status=str(record.status), failure_class=record.failure_class,
                      failure_reason=record.failure_reason, slot=slot.label, seconds=time.monotonic() - start,
                      cpu_seconds=record.cpu_seconds_container)
