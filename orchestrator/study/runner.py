"""The study driver: plan, resume, dispatch to slots, retry infra failures, show progress.

Crash safety: every step is a ledger transition, so a driver killed at any point (SIGKILL included) is
resumed by running the study again. On start it takes the study's lock, removes everything labelled with
the study (a new driver owns nothing yet), turns attempts left in flight into `failed/infra` with
counted = false, and re-queues them as new attempts; runs left delivered or scored are finished
(scored, audited). No planned run is lost and none is counted twice.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path

import docker

from orchestrator import paths
from orchestrator.failures import ConfigError, InfraError, SbxError
from orchestrator.ledger import Ledger, RunRecord, RunState
from orchestrator.log import get_logger
from orchestrator.scoring.store import load_scores
from orchestrator.specs.study import StudySpec
from orchestrator.study.backend import Backend, RunJob, RunOutcome, Slot
from orchestrator.study.planner import PlannedRun, plan, seed_of
from orchestrator.study.reaper import fail_in_flight, remove_containers

log = get_logger(__name__)

DONE = (RunState.AUDITED, RunState.FAILED, RunState.CANCELLED)


class StudyBusy(SbxError):
    """Another process is running this study."""

    failure_class = "config"


class NoSlotsLeft(InfraError):
    """Every slot's node was lost while jobs were left; the study resumes when run again."""


@contextlib.contextmanager
def study_lock(name: str) -> Iterator[Path]:
    """An exclusive lock per study, released by the kernel when the holder dies (even by SIGKILL)."""
    path = paths.sbx_home() / "studies" / f"{name}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise StudyBusy(f"study {name} is being run by another process (pid {f.read().strip() or '?'})") from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        try:
            yield path
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def lock_holder(name: str) -> int | None:
    """The pid running the study now, or None."""
    path = paths.sbx_home() / "studies" / f"{name}.lock"
    if not path.exists():
        return None
    with open(path) as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = f.read().strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(f, fcntl.LOCK_UN)
    return None


def latest_attempts(runs: Iterable[RunRecord]) -> dict[tuple[str, int], RunRecord]:
    """The latest attempt of each (pairing, repeat): the one that stands for the planned run."""
    latest: dict[tuple[str, int], RunRecord] = {}
    for run in runs:
        key = (run.pairing, run.repeat)
        if key not in latest or run.attempt > latest[key].attempt:
            latest[key] = run
    return latest


def open_study(ledger: Ledger, spec: StudySpec) -> str:
    """The study's id: created on first run; a later run must carry the same spec."""
    found = ledger.get_study_by_name(spec.name)
    if found is None:
        return ledger.create_study(spec.name, spec.canonical())
    if found.spec != spec.canonical():
        raise ConfigError(f"study {spec.name!r} exists with a different spec; give the changed study a new name")
    return found.study_id


@dataclass
class Tally:
    """What the progress display and the final summary show."""

    planned: int
    started: float = field(default_factory=time.monotonic)
    running: dict[str, str] = field(default_factory=dict)            # run_id -> slot
    finished: dict[str, RunOutcome] = field(default_factory=dict)
    retried: int = 0
    durations: list[float] = field(default_factory=list)

    def eta_seconds(self, slots: int) -> float | None:
        left = self.planned - len([o for o in self.finished.values() if o.status in DONE])
        if not self.durations or left <= 0:
            return None
        return sum(self.durations) / len(self.durations) * left / max(1, slots)


Progress = Callable[[str, Tally, RunOutcome | None], None]


class StudyRunner:
    def __init__(self, spec: StudySpec, ledger: Ledger, client: docker.DockerClient | None, backend: Backend,
                 progress: Progress | None = None, data_dir: Path | None = None) -> None:
        self.spec, self.ledger, self.client, self.backend = spec, ledger, client, backend
        self.progress = progress or (lambda *_: None)
        self.data_dir = data_dir
        self.study_id = ""
        self.plan: list[PlannedRun] = plan(spec)

    # --- bookkeeping -------------------------------------------------------------------------------

    def _job(self, planned: PlannedRun, run_id: str, phase: str) -> RunJob:
        p = planned.pairing
        return RunJob(study_id=self.study_id, study_name=self.spec.name, run_id=run_id, pairing=p.name,
                      agent=p.agent, agent_command=p.agent_command, model=p.model, repeat=planned.repeat,
                      seed=seed_of(self.spec, planned), task=self.spec.task, budget=self.spec.budget,
                      datasets=tuple(self.spec.datasets), data_dir=str(self.data_dir) if self.data_dir else None,
                      phase=phase, options=dict(p.options))

    def _needs_datasets(self, run_id: str) -> bool:
        with self.ledger.connection() as conn:
            have = set(load_scores(conn, run_id))
        return not set(self.spec.datasets) <= have

    def pending(self) -> list[RunJob]:
        """Jobs left to do, in plan order: create missing rows, retry infra failures within the limit."""
        latest = latest_attempts(self.ledger.list_runs(study_id=self.study_id))
        jobs: list[RunJob] = []
        for planned in self.plan:
            run = latest.get(planned.key)
            if run is None:
                p = planned.pairing
                run_id = self.ledger.new_run(task=self.spec.task, agent=p.agent or f"command:{Path(p.agent_command or '').name}",
                                             budget_name=self.spec.budget, model=p.model, pairing=p.name,
                                             study_id=self.study_id, repeat=planned.repeat,
                                             meta={"order": planned.order})
                jobs.append(self._job(planned, run_id, "run"))
                continue
            status, attempt = run.status, run.attempt
            if status == RunState.PLANNED:
                jobs.append(self._job(planned, run.run_id, "run"))
            elif status in (RunState.DELIVERED, RunState.SCORED):
                jobs.append(self._job(planned, run.run_id, "finish"))
            elif status == RunState.AUDITED and self._needs_datasets(run.run_id):
                jobs.append(self._job(planned, run.run_id, "finish"))
            elif status == RunState.FAILED and run.failure_class == "infra" and attempt <= self.spec.infra_retries:
                jobs.append(self._job(planned, self.ledger.retry(run.run_id), "run"))
        return jobs

    # --- the loop ----------------------------------------------------------------------------------

    def run(self) -> Tally:
        self.study_id = open_study(self.ledger, self.spec)
        with study_lock(self.spec.name):
            # A fleet driver may have no engine of its own: its nodes reap their leftovers (study/node.py).
            gone = self._reap()
            lost = fail_in_flight(self.ledger, self.study_id, "the driver running this attempt stopped (resumed later)")
            if gone or lost:
                log.info("study.resume", study=self.spec.name, containers_removed=len(gone), attempts_lost=len(lost))
            queue = self.pending()
            tally = Tally(planned=len(self.plan))
            self.progress("start", tally, None)
            free: list[Slot] = list(self.backend.slots())
            inflight: dict[Future[RunOutcome], tuple[RunJob, Slot]] = {}
            try:
                while queue or inflight:
                    if queue and not free and not inflight:
                        raise NoSlotsLeft(f"every slot's node was lost; {len(queue)} jobs left "
                                          "(run the study again to resume)")
                    while queue and free:
                        job, slot = queue.pop(0), free.pop(0)
                        inflight[self.backend.submit(job, slot)] = (job, slot)
                        tally.running[job.run_id] = slot.label
                        self.progress("started", tally, None)
                    done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                    for fut in done:
                        job, slot = inflight.pop(fut)
                        if self.backend.alive(slot):
                            free.append(slot)
                        else:
                            log.warning("study.slot_lost", slot=slot.label)
                        tally.running.pop(job.run_id, None)
                        outcome = self._outcome(fut, job, slot)
                        tally.finished[job.run_id] = outcome
                        tally.durations.append(outcome.seconds)
                        retry = self._maybe_retry(job, outcome)
                        if retry is not None:
                            tally.retried += 1
                            queue.insert(0, retry)
                        self.progress("finished", tally, outcome)
            finally:
                for fut in inflight:
                    fut.cancel()
            self._reap()  # nothing is in flight: what is left was lost with a node or worker
            self.progress("end", tally, None)
            return tally

    def _reap(self) -> list[str]:
        """Remove the study's containers and volumes on the driver's engine (a fleet driver may have none)."""
        if self.client is None:
            return []
        runs = [r.run_id for r in self.ledger.list_runs(study_id=self.study_id)]
        return remove_containers(self.client, study_id=self.study_id, run_ids=runs)

    def _outcome(self, fut: Future[RunOutcome], job: RunJob, slot: Slot) -> RunOutcome:
        try:
            return fut.result()
        except Exception as exc:  # a job that raised is our fault (infra), never the agent's
            log.warning("study.job_error", run_id=job.run_id, error=f"{type(exc).__name__}: {exc}")
            run = self.ledger.get_run(job.run_id)
            reason = f"{type(exc).__name__}: {exc}"[:2000]
            if run.status == RunState.PLANNED:  # nothing came back (a lost node): say where it ran
                self.ledger.update_measurements(job.run_id, node=slot.node, slot=slot.index)
                self.ledger.advance(job.run_id, RunState.STARTING)
                run = self.ledger.get_run(job.run_id)
            if run.status in (RunState.STARTING, RunState.RUNNING):
                self.ledger.advance(job.run_id, RunState.FAILED, failure_class="infra", reason=reason)
            # delivered/scored runs stay as they are: the next `sbx study run` finishes them
            run = self.ledger.get_run(job.run_id)
            return RunOutcome(job.run_id, str(run.status), run.failure_class, run.failure_reason, slot.label, 0.0)

    def _maybe_retry(self, job: RunJob, outcome: RunOutcome) -> RunJob | None:
        if outcome.status != RunState.FAILED or outcome.failure_class != "infra":
            return None
        run = self.ledger.get_run(job.run_id)
        if run.attempt > self.spec.infra_retries:
            log.warning("study.retries_exhausted", run_id=job.run_id, attempts=run.attempt)
            return None
        planned = next(p for p in self.plan if p.key == (run.pairing, run.repeat))
        return self._job(planned, self.ledger.retry(job.run_id), "run")
