"""The study driver: plan, resume, dispatch to slots, retry infra failures, show progress.

Crash safety: every step is a ledger transition, so a driver killed at any point (SIGKILL included) is
resumed by running the study again. On start it takes the study's lock, removes everything labelled with
the study (a new driver owns nothing yet), turns attempts left in flight into `failed/infra` with
counted = false, and re-queues them as new attempts; runs left delivered or scored are finished
(scored, audited). No planned run is lost and none is counted twice.

A driver told to stop (SIGINT, SIGTERM, SIGHUP: an `Interrupted` in the main thread) stops its runs the same
way: the backend interrupts them (each ends failed/infra and removes its containers), the driver waits up
to `stop_grace_s` for them, then marks what is still in flight failed/infra, stops recording (a job still
going can no longer write an outcome), and removes the study's containers itself.

Model endpoints: while an endpoint keeps refusing (the gateway's health: 429, quota, 5xx, timeouts call
after call; or a run that ended on them), no new run is launched on it; its jobs wait in the queue while
others go ahead, and the driver probes the endpoint with one tiny call (after `probe_interval_s`, doubling
up to `max_probe_interval_s`, and never before a `retry-after` ends) until it answers again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.failures import ConfigError, DataError, InfraError, SbxError
from orchestrator.home import Home
from orchestrator.ledger import FailureClass, Ledger, RunRecord, RunState
from orchestrator.log import get_logger
from orchestrator.specs.judge import JudgeSpec
from orchestrator.specs.study import StudySpec
from orchestrator.study.backend import Backend, JobResult, RunJob, Slot
from orchestrator.study.planner import PlannedRun, plan, seed_of
from orchestrator.study.reaper import fail_in_flight, remove_containers
from orchestrator.study.status import latest_attempts, study_lock

if TYPE_CHECKING:
    import docker

    from orchestrator.run.gateway_host import GatewayHost

log = get_logger(__name__)

DONE = (RunState.AUDITED, RunState.FAILED, RunState.CANCELLED)


class NoSlotsLeft(InfraError):
    """Every slot's node was lost while jobs were left; the study resumes when run again."""


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
    finished: dict[str, JobResult] = field(default_factory=dict)
    retried: int = 0
    #: kept as runs finish, so the display's figures cost O(1) per event at any study size
    done: int = 0                   # finished in a final state (DONE)
    attempts_seconds: float = 0.0   # wall time of every finished attempt
    attempts: int = 0

    def finish(self, run_id: str, outcome: JobResult) -> None:
        self.finished[run_id] = outcome
        self.done += outcome.status in DONE
        self.attempts_seconds += outcome.seconds
        self.attempts += 1

    def eta_seconds(self, slots: int) -> float | None:
        left = self.planned - self.done
        if not self.attempts or left <= 0:
            return None
        return self.attempts_seconds / self.attempts * left / max(1, slots)


Progress = Callable[[str, Tally, JobResult | None], None]


@dataclass
class Paused:
    """An endpoint no run is launched on until a probe (or, with no gateway to probe through, the wait) ends."""

    since: float
    next_probe: float
    interval: float
    probes: int = 0


class StudyRunner:
    """`gateway`: the driver's model gateway (runs go through it on the local backend; a fleet driver probes
    refusing endpoints through it); `endpoints_file`/`ratecards_dir` go with every job to the node."""

    def __init__(self, spec: StudySpec, home: Home, ledger: Ledger, client: docker.DockerClient | None,
                 backend: Backend, progress: Progress | None = None, data_dir: Path | None = None,
                 gateway: GatewayHost | None = None, endpoints_file: Path | None = None,
                 ratecards_dir: Path | None = None, probe_interval_s: float = 30.0,
                 max_probe_interval_s: float = 600.0, stop_grace_s: float = 30.0) -> None:
        self.spec, self.home, self.ledger, self.client, self.backend = spec, home, ledger, client, backend
        self.stop_grace_s = stop_grace_s
        self.progress = progress or (lambda *_: None)
        self.data_dir = data_dir
        self.gateway = gateway
        self.endpoints_file, self.ratecards_dir = endpoints_file, ratecards_dir
        self.probe_interval_s, self.max_probe_interval_s = probe_interval_s, max_probe_interval_s
        self.paused: dict[str, Paused] = {}
        self.study_id = ""
        self.plan: list[PlannedRun] = plan(spec)
        self._kinds: dict[str, str | None] = {}
        self._validated: dict[str, dict[str, Any]] = {}

    # --- bookkeeping -------------------------------------------------------------------------------

    def _job(self, planned: PlannedRun, run_id: str, phase: str) -> RunJob:
        p = planned.pairing
        inputs = self._inputs(planned.task)
        judge = self._judge(inputs)
        files = bool(p.endpoint or judge)  # the node's gateway reads them
        return RunJob(study_id=self.study_id, study_name=self.spec.name, run_id=run_id, pairing=p.name,
                      agent=p.agent, agent_command=p.agent_command, model=p.model, repeat=planned.repeat,
                      seed=seed_of(self.spec, planned), task=planned.task, budget=self.spec.budget,
                      datasets=tuple(self.spec.datasets), data_dir=str(self.data_dir) if self.data_dir else None,
                      phase=phase, options=dict(p.options), endpoint=p.endpoint,
                      endpoints_file=str(self.endpoints_file.resolve()) if self.endpoints_file and files else None,
                      ratecards_dir=str(self.ratecards_dir.resolve()) if self.ratecards_dir and files else None,
                      judge=judge, judge_digest=JudgeSpec.model_validate(judge).digest() if judge else None,
                      **inputs)

    def _judge(self, inputs: dict[str, Any]) -> dict[str, Any] | None:
        """The run's judge as JSON: the study's, else the one its task (as validated) names."""
        if self.spec.judge is not None:
            return self.spec.judge.model_dump(mode="json", by_alias=True)
        bundle = inputs.get("task_bundle")
        return bundle.spec.get("judge") if bundle is not None else None

    def _inputs(self, task: str) -> dict[str, Any]:
        """The task's bundle and the budget's spec with their digests, validated once per task (study/job.py)."""
        if task not in self._validated:
            from orchestrator.study.job import validated_inputs

            self._validated[task] = validated_inputs(task, self.spec.budget)
        return self._validated[task]

    def _needs_datasets(self, run: RunRecord, scored: dict[str, set[str]]) -> bool:
        """An audited ml run not yet scored on every dataset (a tests task's run is graded, never scored)."""
        if self._kind(run.task) == "tests":
            return False
        return not set(self.spec.datasets) <= scored.get(run.run_id, set())

    def _needs_judge(self, planned: PlannedRun, run: RunRecord, judged: dict[str, set[str]]) -> bool:
        """An audited (or counted failed) run whose judge has no row yet (the driver stopped between its steps)."""
        judge = self._judge(self._inputs(planned.task))
        return judge is not None and judge["name"] not in judged.get(run.run_id, set())

    def _kind(self, task: str) -> str | None:
        if task not in self._kinds:
            from orchestrator.specs.task import task_kind, task_yaml

            self._kinds[task] = task_kind(task_yaml(task))
        return self._kinds[task]

    def _create(self, missing: list[PlannedRun]) -> dict[tuple[str, str, int], str]:
        """The planned runs that have no row yet, each planned (attempt 1), in one write transaction: a
        fresh study of 100,000 runs commits once, not once a run; a driver killed meanwhile leaves none of
        them, and the next `sbx study run` plans them all (the rows are keyed by task, pairing and repeat, so
        none is ever planned twice)."""
        if not missing:
            return {}
        created: dict[tuple[str, str, int], str] = {}
        with self.ledger.batch():
            for planned in missing:
                p = planned.pairing
                created[planned.key] = self.ledger.new_run(
                    task=planned.task, agent=p.agent or f"command:{Path(p.agent_command or '').name}",
                    budget_name=self.spec.budget, model=p.model, pairing=p.name, study_id=self.study_id,
                    repeat=planned.repeat, meta={"order": planned.order})
        return created

    def pending(self) -> list[RunJob]:
        """Jobs left to do, in plan order: create missing rows, retry infra failures within the limit."""
        latest = latest_attempts(self.ledger.list_runs(study_id=self.study_id))
        # what the audited runs have of their last steps: one query each for the study, not two per run
        scored = self.ledger.scores.datasets_by_run(self.study_id)
        judged = self.ledger.judges.names_by_run(self.study_id)
        created = self._create([planned for planned in self.plan if planned.key not in latest])
        jobs: list[RunJob] = []
        for planned in self.plan:
            run = latest.get(planned.key)
            if run is None:
                jobs.append(self._job(planned, created[planned.key], "run"))
                continue
            status, attempt = run.status, run.attempt
            if status == RunState.PLANNED:
                jobs.append(self._job(planned, run.run_id, "run"))
            elif status in (RunState.DELIVERED, RunState.SCORED):
                jobs.append(self._job(planned, run.run_id, "finish"))
            elif status == RunState.AUDITED and (self._needs_datasets(run, scored)
                                                   or self._needs_judge(planned, run, judged)):
                jobs.append(self._job(planned, run.run_id, "finish"))
            elif status == RunState.FAILED and run.counted and self._needs_judge(planned, run, judged):
                jobs.append(self._job(planned, run.run_id, "finish"))  # its judge's row (run/judge.py)
            elif (status == RunState.FAILED and run.failure_class is not None and run.failure_class.retryable
                  and attempt <= self.spec.infra_retries):
                jobs.append(self._job(planned, self.ledger.retry(run.run_id), "run"))
        return jobs

    # --- the loop ----------------------------------------------------------------------------------

    def run(self) -> Tally:
        self.study_id = open_study(self.ledger, self.spec)
        with study_lock(self.home, self.spec.name):
            # A fleet driver may have no engine of its own: its nodes reap their leftovers (study/node.py).
            gone = self._reap()
            lost = fail_in_flight(self.ledger, self.study_id, "the driver running this attempt stopped (resumed later)")
            if gone or lost:
                log.info("study.resume", study=self.spec.name, containers_removed=len(gone), attempts_lost=len(lost))
            queue = self.pending()
            tally = Tally(planned=len(self.plan))
            self.progress("start", tally, None)
            free: list[Slot] = list(self.backend.slots())
            inflight: dict[Future[JobResult], tuple[RunJob, Slot]] = {}
            stopped: SbxError | None = None  # a config or data error: nothing more is started
            try:
                while queue or inflight:
                    if stopped is not None:
                        queue.clear()
                        if not inflight:
                            break
                    if queue and not free and not inflight:
                        raise NoSlotsLeft(f"every slot's node was lost; {len(queue)} jobs left "
                                          "(run the study again to resume)")
                    self._probe_due(queue)
                    while queue and free:
                        at = self._launchable(queue)
                        if at is None:  # every job left waits for a refusing endpoint
                            break
                        job, slot = queue.pop(at), free.pop(0)
                        inflight[self.backend.submit(job, slot)] = (job, slot)
                        tally.running[job.run_id] = slot.label
                        self.progress("started", tally, None)
                    if not inflight:
                        time.sleep(self._until_next_probe())
                        continue
                    done, _ = wait(inflight, timeout=self._until_next_probe() if self.paused else None,
                                   return_when=FIRST_COMPLETED)
                    for fut in done:
                        job, slot = inflight.pop(fut)
                        if self.backend.alive(slot):
                            free.append(slot)
                        else:
                            log.warning("study.slot_lost", slot=slot.label)
                        tally.running.pop(job.run_id, None)
                        try:
                            outcome = self._outcome(fut, job, slot)
                        except (ConfigError, DataError) as exc:
                            log.error("study.config_error", run_id=job.run_id, error=str(exc))
                            stopped = stopped or exc
                            continue
                        tally.finish(job.run_id, outcome)
                        if outcome.endpoint_refusing:
                            self._pause(outcome.endpoint_refusing)
                        retry = self._maybe_retry(job, outcome)
                        if retry is not None:
                            tally.retried += 1
                            queue.insert(0, retry)
                        self.progress("finished", tally, outcome)
            except KeyboardInterrupt:
                self._stop(inflight)
                raise
            finally:
                for fut in inflight:
                    fut.cancel()
            self._reap()  # nothing is in flight: what is left was lost with a node or worker
            self.progress("end", tally, None)
            if stopped is not None:
                raise stopped  # the runs it hit stay planned; fix the cause and run the study again
            return tally

    def _stop(self, inflight: dict[Future[JobResult], tuple[RunJob, Slot]]) -> None:
        """The driver is stopping: end the runs in flight, leave the ledger truthful, leave no container."""
        log.warning("study.stopping", study=self.spec.name, in_flight=len(inflight), grace_s=self.stop_grace_s)
        for fut in inflight:
            fut.cancel()  # not started yet: never will be
        self.backend.interrupt()
        _done, pending = wait(inflight, timeout=self.stop_grace_s)
        lost = fail_in_flight(self.ledger, self.study_id, "interrupted: the study's driver was stopped")
        runs = [r.run_id for r in self.ledger.list_runs(study_id=self.study_id)]
        if pending:
            # Jobs still going after the grace (a scoring, a copy-out) can no longer record anything: what
            # they were doing is redone by the next `sbx study run`, and their containers go now.
            self.ledger.close()
        if self.client is not None:
            gone = remove_containers(self.client, self.home.mount_parent, study_id=self.study_id, run_ids=runs)
            log.warning("study.stopped", study=self.spec.name, attempts_failed=len(lost), still_running=len(pending),
                        containers_removed=len(gone))

    # --- endpoints that keep refusing ---------------------------------------------------------------

    def _refusing(self, endpoint: str) -> bool:
        if endpoint in self.paused:
            return True
        if self.gateway is not None and self.gateway.refusing(endpoint):
            self._pause(endpoint)
            return True
        return False

    def _launchable(self, queue: list[RunJob]) -> int | None:
        """The first job in the queue that may start now (a job finishing a delivered run needs no model)."""
        for at, job in enumerate(queue):
            if job.phase != "run" or job.endpoint is None or not self._refusing(job.endpoint):
                return at
        return None

    def _pause(self, endpoint: str) -> None:
        if endpoint in self.paused:
            return
        now = time.monotonic()
        wait_s = self.probe_interval_s
        if self.gateway is not None:
            until = self.gateway.health(endpoint).retry_after_until
            if until is not None:
                wait_s = max(wait_s, until - time.time())
        self.paused[endpoint] = Paused(since=now, next_probe=now + wait_s, interval=self.probe_interval_s)
        log.warning("study.endpoint_paused", endpoint=endpoint, probe_in_s=round(wait_s, 1))

    def _until_next_probe(self) -> float:
        if not self.paused:
            return 0.05
        return max(0.05, min(p.next_probe for p in self.paused.values()) - time.monotonic())

    def _probe_due(self, queue: list[RunJob]) -> None:
        """Probe each paused endpoint whose time has come; resume it when it answers."""
        now = time.monotonic()
        for endpoint, paused in list(self.paused.items()):
            if paused.next_probe > now:
                continue
            model = next((j.model for j in queue if j.endpoint == endpoint and j.model), None)
            answered, why = self._probe(endpoint, model) if model else (True, "no job waits for it")
            paused.probes += 1
            if answered:
                del self.paused[endpoint]
                log.warning("study.endpoint_resumed", endpoint=endpoint, probes=paused.probes,
                            paused_s=round(time.monotonic() - paused.since, 1))
                continue
            paused.interval = min(paused.interval * 2, self.max_probe_interval_s)
            paused.next_probe = time.monotonic() + paused.interval
            log.warning("study.endpoint_still_refusing", endpoint=endpoint, probes=paused.probes, error=why,
                        next_probe_in_s=round(paused.interval, 1))

    def _probe(self, endpoint: str, model: str) -> tuple[bool, str]:
        if self.gateway is None:  # nothing to probe through: let the next run try
            return True, "no gateway on the driver"
        folder = self.home.study_dir(self.spec.name) / "probes"
        folder.mkdir(parents=True, exist_ok=True)
        try:
            result = self.gateway.probe(endpoint, model, folder / f"{endpoint}-{int(time.time())}.jsonl.gz")
        except Exception as exc:  # noqa: BLE001 - a failed probe is an endpoint still refusing
            return False, f"{type(exc).__name__}: {exc}"[:300]
        return result.outcome == "ok", result.error or result.outcome

    def _reap(self) -> list[str]:
        """Remove the study's containers and volumes on the driver's engine (a fleet driver may have none)."""
        if self.client is None:
            return []
        runs = [r.run_id for r in self.ledger.list_runs(study_id=self.study_id)]
        return remove_containers(self.client, self.home.mount_parent, study_id=self.study_id, run_ids=runs)

    def _outcome(self, fut: Future[JobResult], job: RunJob, slot: Slot) -> JobResult:
        """What a finished job came to. A config or data error propagates (the run stays where it was); any
        other exception is our fault (infra), never the agent's."""
        try:
            return fut.result()
        except (ConfigError, DataError):
            raise
        except Exception as exc:
            log.warning("study.job_error", run_id=job.run_id, error=f"{type(exc).__name__}: {exc}")
            run = self.ledger.get_run(job.run_id)
            reason = f"{type(exc).__name__}: {exc}"[:2000]
            if run.status == RunState.PLANNED:  # nothing came back (a lost node): say where it was sent
                self.ledger.update_measurements(job.run_id, node=slot.node, slot=slot.index)
            if run.status in (RunState.PLANNED, RunState.STARTING, RunState.RUNNING):
                self.ledger.advance(job.run_id, RunState.FAILED, failure_class="infra", reason=reason)
            # delivered/scored runs stay as they are: the next `sbx study run` finishes them
            run = self.ledger.get_run(job.run_id)
            return JobResult(job.run_id, str(run.status), run.failure_class, run.failure_reason, slot.label, 0.0)

    def _maybe_retry(self, job: RunJob, outcome: JobResult) -> RunJob | None:
        if outcome.status != RunState.FAILED or outcome.failure_class is None:
            return None
        if not FailureClass(outcome.failure_class).retryable:
            return None
        run = self.ledger.get_run(job.run_id)
        if run.attempt > self.spec.infra_retries:
            log.warning("study.retries_exhausted", run_id=job.run_id, attempts=run.attempt)
            return None
        planned = next(p for p in self.plan if p.key == (run.task, run.pairing, run.repeat))
        return self._job(planned, self.ledger.retry(job.run_id), "run")
