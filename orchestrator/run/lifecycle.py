"""The one run lifecycle: the only path from a planned run to its final state.

    prepare -> sandbox -> agent -> copy-out -> evaluate -> audit -> extra datasets -> judge

`RunLifecycle.run` takes a run from whatever state the ledger holds (planned: everything; delivered: the
evaluation and audit left over after a crash; audited: scores on datasets not yet scored) to its end.
Each phase is a timed step with its own `step` event (run/context.py). What a failure means comes from
its type (orchestrator/failures.py):

- a config or data error (a missing image, data file or agent file; an impossible cpuset) is found in
  `prepare`, before the run's state changes: it propagates and the run stays `planned` (`sbx run` marks it
  `cancelled`); it is never retried;
- once the sandbox started, an error that escapes is our fault: the attempt ends `failed/infra` (counted =
  false; a study retries it), as does an interruption (SIGINT, SIGTERM, SIGHUP, or `cancel` set by a study
  being stopped: the sandbox checks it with every look at its limits, and no later step starts);
- an evaluation or audit that breaks on our side leaves the run `delivered`/`scored`, to be finished later;
- a judge (run/judge.py) never fails a run: whatever breaks is its own outcome in `judge_verdicts`.

A new task kind plugs in as its evaluation (run/evaluate.py); a per-run service beside the agent (the
model gateway) as a sandbox `Attachment` (run/sandbox_phase.py). A run that talks to a model (a CLI
agent, or an endpoint given to a scripted agent) is prepared by run/model_plan.py and served by the
host's gateway (`gateway=`) through run/model_attachment.py.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

import docker

from orchestrator.agents import AgentSpec
from orchestrator.agents.oracle_payload import ORACLE
from orchestrator.failures import ConfigError, DataError, Interrupted, SbxError, failure_class_of
from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunRecord, RunState
from orchestrator.log import get_logger
from orchestrator.run.audit import audit
from orchestrator.run.config_hash import config_meta
from orchestrator.run.context import RunContext
from orchestrator.run.evaluate import evaluate, missing_datasets, needs_evaluation, score_dataset
from orchestrator.run.evaluate_tests import prepare_tests
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.run.images import run_image
from orchestrator.run.judge import check_judge, judge_delivered, needs_judge
from orchestrator.run.model_attachment import ModelAttachment
from orchestrator.run.model_plan import ModelPlan, prepare_model
from orchestrator.run.request import RunRequest
from orchestrator.run.sandbox_phase import Attachment, SandboxPhase
from orchestrator.specs.task import TestsTaskSpec

log = get_logger(__name__)


@dataclass(frozen=True)
class Prepared:
    image: str                      # the id of the image the sandbox runs (a CLI agent's own image)
    agent: AgentSpec | None = None  # the agent with its command for this run
    model: ModelPlan | None = None  # the run's model, endpoint and rate card; None: it talks to no model


def prepare(ctx: RunContext, gateway: GatewayHost | None = None) -> Prepared:
    """Check everything the run needs before its state changes; raise ConfigError/DataError naming the fix."""
    req = ctx.request
    if req.task.kind == "ml":
        for role in (req.task.files.train, req.task.files.eval):
            if not (req.data_dir / role.path).is_file():
                raise DataError(f"{req.data_dir / role.path}: missing; run `sbx data prepare --task {req.task.name}` "
                                "(or pass --data-dir)")
    if req.agent.kind == "builtin" and req.agent.name == ORACLE and req.task.kind != "tests":
        raise ConfigError(f"agent {ORACLE}: it applies a tests task's reference solution; {req.task.name} is "
                          f"an {req.task.kind} task")
    if req.agent.kind != "cli" and (req.agent.host_path is None or not req.agent.host_path.is_file()):
        raise ConfigError(f"agent {req.agent.name}: {req.agent.host_path} is not a file")
    req.resolved_cpuset()  # an impossible cpuset is a config error
    sandbox = run_image(ctx.client, req.task)  # the task's environment's image (built when missing), else standard
    model = prepare_model(req, ctx.client, gateway, sandbox.image_id)
    agent = model.agent
    if req.task.kind == "tests":  # the grader's image, and the oracle's solution (run/evaluate_tests.py)
        agent = prepare_tests(ctx, agent or req.agent)
    if req.judge is not None:  # its gateway, endpoint, model and rate card, before the run starts
        check_judge(req.judge, gateway, ctx.run_id)
    prepared = Prepared(image=model.image, agent=agent, model=model.plan)
    # seed and config hash, for paired analyses (run/config_hash.py); meta is merged, nothing else changes
    # where the task was loaded from (not configuration: its content is in the config): a rescore finds a
    # task given by path there (run/rescore.py)
    meta = {**config_meta(req, prepared.image), "task_kind": req.task.kind, "task_path": str(req.task.root)}
    if req.judge is not None:  # which judge grades the run (not configuration: the agent never meets it)
        meta["judge"] = {"name": req.judge.name, "endpoint": req.judge.endpoint, "model": req.judge.model,
                         "spec_sha256": req.judge.digest()}
    if sandbox.environment is not None:  # absent for the standard images: their runs' meta stays as it was
        meta["environment"] = sandbox.environment
        # the sandbox by name: a CLI agent's run records its own image (built on this one) as `image`
        meta["sandbox_image"] = sandbox.tag
    ctx.ledger.update_measurements(ctx.run_id, meta=meta)
    return prepared


def materialised(req: RunRequest) -> RunRequest:
    """`req` with a locked tests task's repo and hidden tests made (when missing) and checked by digest in
    the task cache, before any step uses them; a mismatch is a DataError naming both digests and the run
    stays where it was."""
    if isinstance(req.task, TestsTaskSpec) and not req.task.materialised:
        from orchestrator.tasks.materialise import materialise

        return replace(req, task=materialise(req.task))
    return req


class RunLifecycle:
    """`gateway`: the host's model gateway, for runs that talk to a model (started by whoever drives runs)."""

    def __init__(self, home: Home, ledger: Ledger, client: docker.DockerClient,
                 attachments: Callable[[RunRequest], tuple[Attachment, ...]] | None = None,
                 gateway: GatewayHost | None = None, cancel: threading.Event | None = None) -> None:
        self.home, self.ledger, self.client = home, ledger, client
        self.attachments = attachments or (lambda _req: ())
        self.gateway = gateway
        #: set by whoever stops this process's runs (a study driver told to stop): the run ends as interrupted
        self.cancel = cancel or threading.Event()

    def _check_cancel(self) -> None:
        if self.cancel.is_set():
            raise Interrupted(why="the run was cancelled (its study is stopping)")

    def plan(self, req: RunRequest) -> str:
        """A new `planned` run for `req` (ad-hoc runs; a study plans its own rows)."""
        return self.ledger.new_run(
            study_id=req.study_id, pairing=req.pairing or req.agent.name, agent=req.agent.name, model=req.model,
            task=req.task.name, budget_name=req.budget.name, repeat=req.repeat, meta=req.meta,
        )

    def run(self, req: RunRequest, run_id: str) -> RunRecord:
        """Take run `run_id` from its current state as far as it goes; returns its final record."""
        req = materialised(req)
        ctx = RunContext(self.home, self.ledger, self.client, req, run_id)
        self._check_cancel()
        if self.ledger.get_run(run_id).status == RunState.PLANNED:
            with ctx.step("prepare"):
                prepared = prepare(ctx, self.gateway)
            if prepared.agent is not None:  # the agent as prepared for this run (a CLI agent's command)
                ctx.request = replace(ctx.request, agent=prepared.agent)
            self._sandbox(ctx, prepared)
        record = self.ledger.get_run(run_id)
        self._check_cancel()  # a delivered run stays delivered: the next run of the study finishes it
        if record.status == RunState.DELIVERED and needs_evaluation(req):
            with ctx.step("evaluate"):
                evaluate(ctx)
            record = self.ledger.get_run(run_id)
            if record.status == RunState.FAILED:  # unscorable: its audit is stored for a reviewer
                with ctx.step("audit"):
                    audit(ctx)
        if record.status == RunState.SCORED:
            with ctx.step("audit"):
                audit(ctx)
        if self.ledger.get_run(run_id).status == RunState.AUDITED:
            for dataset in missing_datasets(self.ledger, run_id, req.datasets):
                with ctx.step(f"score_{dataset}"):
                    score_dataset(ctx, dataset)
        if needs_judge(ctx):  # after the tests' grading, so each verdict has its reference beside it
            self._check_cancel()
            with ctx.step("judge"):
                judge_delivered(ctx, self.gateway)
        return self.ledger.get_run(run_id)

    def _sandbox(self, ctx: RunContext, prepared: Prepared) -> None:
        """The sandbox phase; an exception that stops it ends the attempt in the ledger. Interruptions
        propagate after that; other errors are then an outcome on record, and the lifecycle goes on."""
        attachments = self.attachments(ctx.request)
        if prepared.model is not None:
            assert self.gateway is not None  # prepare_model checked it
            attachments = (*attachments, ModelAttachment(self.gateway, prepared.model))
        try:
            SandboxPhase(ctx, prepared.image, attachments, cancel=self.cancel).run()
        except Exception as exc:  # noqa: BLE001 - recorded as the attempt's failure by its type
            log.warning("run.sandbox_error", run_id=ctx.run_id, error=f"{type(exc).__name__}: {exc}"[:500],
                        exc_info=failure_class_of(exc) == "infra" and not isinstance(exc, SbxError))
            self._fail(ctx.run_id, exc)
        except BaseException as exc:
            self._fail(ctx.run_id, exc)
            raise

    def _fail(self, run_id: str, exc: BaseException) -> None:
        """End an attempt that an exception stopped: as its type's class (our fault unless it says otherwise)."""
        record = self.ledger.get_run(run_id)
        if record.status not in (RunState.STARTING, RunState.RUNNING):
            return
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            what = f"{type(exc).__name__}: {exc}" if isinstance(exc, Interrupted) else type(exc).__name__
            cls, reason = "infra", f"interrupted ({what}) while the run was {record.status}"
        else:
            cls, reason = failure_class_of(exc) or "infra", f"{type(exc).__name__}: {exc}"
        log.warning("run.failed", run_id=run_id, failure_class=cls, reason=reason[:500])
        self.ledger.advance(run_id, RunState.FAILED, failure_class=cls, reason=reason[:2000])
