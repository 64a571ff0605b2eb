"""Score one delivered repo on one data set: step A in a fresh scorer container, step B here.

`score_repo` returns a ScoreResult for everything the scored code does, good or bad: a failure of the
agent's code is an `unscorable` result with its reason, never an exception. Exceptions are ours only:
DataError (the prepared data is wrong), InfraError/ScorerError (the engine or the scorer broke; retryable).

One scoring, in order: the clean copy of the delivered code (scoring/artifact.py: code only, the rest
withheld and reported); the first container: train.py retrained as an experiment runs it, the main,
evaluation and check batches; the metrics, the eval score sbx computes on the evaluation rows and the batch
check over every context; then the second check in a freshly started container (scoring/batches.py).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import docker
import numpy as np

from orchestrator.failures import ScorerError, UnscorableArtifact
from orchestrator.gateway.closed import ClosedRun
from orchestrator.ledger.scores import ScoreResult
from orchestrator.log import get_logger
from orchestrator.scoring import protocol
from orchestrator.scoring.artifact import CodeSelection, select_code
from orchestrator.scoring.batches import (
    CHECK_ROLES,
    EVAL,
    FRESH,
    MAIN,
    BatchCheck,
    BatchPlan,
    compare_contexts,
    fresh_plan,
    plan_batches,
    row_change,
)
from orchestrator.scoring.container import ScorerContainer, adhoc_run_id
from orchestrator.scoring.data import RowSpace, labelled_rows, load_hidden, pristine_files, row_space
from orchestrator.scoring.metrics import compute_metrics
from orchestrator.scoring.options import ScoreOptions
from orchestrator.scoring.tasktypes import TaskScoring
from orchestrator.scoring.text import clean, exception_name, place_in_code, reported_score

log = get_logger(__name__)

#: why a run is unscorable; each is the agent's outcome, recorded with its detail
REASONS = {
    "no_train_py": "the artifact has no train.py",
    "bad_artifact": "the artifact could not be read as a repo",
    "train_error": "train.py raised an exception (or exited) while training",
    "no_predict_proba": "train.py left no callable prediction function (the contract's: predict_proba, predict)",
    "predict_error": "the prediction function raised an exception",
    "timeout": "training or predicting exceeded its time limit",
    "cpu_limit": "training or predicting used more CPU-seconds than one experiment of the run may",
    "oom": "the kernel's OOM killer stopped the scored code at the memory limit",
    "wrong_shape": "the prediction function did not return one number per row (one per class: multiclass)",
    "not_numeric": "the prediction function returned text (strings), not numbers",
    "not_finite": "the prediction function returned NaN or infinite values",
    "out_of_range": "predict_proba returned probabilities outside [0, 1]",
    "not_a_distribution": "a multiclass predict_proba row does not sum to 1",
    "output_flooding": "the scored code wrote more than the output limit",
    "crashed": "the scored process died without an exception (signal, os._exit)",
    "protocol_error": "the scored process wrote something the scorer's protocol does not allow",
    "artifact_error": "scoring the artifact failed because of what it holds (see the detail)",
}
#: the tolerance for training that is not reproducible: a fresh-check change counts only past this many
#: times the control batch's own change
NOISE_FACTOR = 10.0


class _Timer:
    def __init__(self) -> None:
        self.train_start = self.train_end = self.predict_end = 0.0


@dataclass
class _Answers:
    """What one container answered: predictions by row id per batch role, in the row space's numbering."""

    main: np.ndarray
    evals: np.ndarray | None
    again: dict[str, dict[int, Any]] = field(default_factory=dict)  # a float, or a multiclass row
    first_batch: np.ndarray | None = None       # the predictions of the plan's first batch, in its order
    reported: float | None = None
    train_cpu: float | None = None
    cpu: float | None = None


@dataclass
class _Scoring:
    """Everything a container drive needs, shared by the first container and the fresh one."""

    client: docker.DockerClient
    image: str
    options: ScoreOptions
    mount_parent: Path | None
    run_id: str | None
    env_run_id: str
    dataset: str
    space: RowSpace
    selection: CodeSelection
    tar: bytes
    eval_line: str
    experiment: int
    experiments_left: int
    model: ClosedRun | None
    scoring: TaskScoring


def score_repo(client: docker.DockerClient, repo_dir: Path, data_dir: Path, dataset: str = "holdout", *,
               image: str, mount_parent: Path | None = None, options: ScoreOptions | None = None,
               run_id: str | None = None, target: str = "dep_delayed_15min", positive: str = "Y",
               eval_line: str = r"Eval AUC:\s*([0-9]*\.?[0-9]+)", train_py: Path | None = None,
               experiment: int = 1, experiments_left: int = 0, model: ClosedRun | None = None,
               scoring: TaskScoring | None = None) -> ScoreResult:
    """Score the train.py in `repo_dir` (a repo folder or a train.py) on `dataset` of the prepared `data_dir`.

    `train_py` is the train.py that counts when it is not the folder's (a run's committed version). The
    scorer meets what the run's next experiment would: `SBX_RUN_ID` is `run_id` (an id of the same shape
    outside a run), `SBX_EXPERIMENT` is `experiment`, `experiments.sock` says `experiments_left`, and a run
    that had a model endpoint has its model path, closed: `model` (gateway/closed.py; None: no model path).

    Whatever the scored code does comes back as a ScoreResult (`scored`, or `unscorable` with a reason of
    REASONS). Raises only for our side: DataError (prepared data), InfraError/ScorerError (engine, scorer).

    `scoring` is the task's type, metric, labels and prediction function (TaskScoring.of(task)); without it,
    the binary AUC scoring of `target` and `positive` by predict_proba."""
    options = options or ScoreOptions()
    start = time.monotonic()
    scoring = scoring or TaskScoring(target=target, positive=positive)
    hidden = load_hidden(data_dir, dataset, scoring=scoring)
    files = pristine_files(data_dir)
    eval_rows = labelled_rows(files["eval.csv"], scoring=scoring) if options.eval_rows else None
    train_rows = (labelled_rows(files["train.csv"], scoring=scoring)
                  if options.large_contexts or options.fresh_check else None)
    space = row_space(hidden, eval_rows, train_rows)
    base: dict[str, Any] = {"dataset": dataset, "batch_rows": options.batch_rows, "seed": options.seed,
                            "tolerance": options.tolerance, "image": image, "cpu_limit_s": options.train_cpu_limit_s}
    try:
        selection = select_code(Path(repo_dir), train_py=train_py)
    except UnscorableArtifact as exc:
        return _done(_unscorable(exc, base, start, _Timer()), run_id)
    base.update(artifact_sha256=selection.artifact_sha256, train_sha256=selection.train_sha256,
                withheld_count=selection.withheld_count,
                withheld_json=json.dumps(selection.withheld_json()) if selection.withheld_count else None)
    if selection.withheld_count:
        log.info("score.withheld", run_id=run_id, count=selection.withheld_count,
                 first=[w.path for w in selection.withheld[:5]])
    plan = plan_batches(hidden.n, batch_rows=options.batch_rows, check_rows=options.check_rows, seed=options.seed,
                        singles=options.check_singles, n_eval=space.layout.n_eval,
                        n_train=space.layout.n_train if options.large_contexts else 0,
                        large_contexts=options.large_contexts)
    job = _Scoring(client, image, options, mount_parent, run_id, run_id or adhoc_run_id(), dataset, space,
                   selection, selection.tar(files), eval_line, experiment, experiments_left, model, scoring)
    timer = _Timer()
    try:
        first = _score_in_container(job, plan, timer, role="main")
    except UnscorableArtifact as exc:
        return _done(_unscorable(exc, base, start, timer), run_id)
    score = scoring.score(hidden.labels, first.main)
    # a binary task keeps the AUC columns filled, whatever its metric (their readers predate `metric`)
    metrics = compute_metrics(hidden.labels, first.main) if scoring.task_type == "binary" else None
    eval_score = None
    if eval_rows is not None and first.evals is not None:
        eval_score = round(scoring.score(eval_rows.labels, first.evals, with_se=False).value, 4)
    check, per, changed = compare_contexts(first.main, plan.check_rows,
                                           {r: first.again[r] for r in CHECK_ROLES if r in first.again},
                                           options.tolerance)
    contexts: dict[str, Any] = {role: c.to_json() for role, c in per.items()}
    fresh_status, cpu_total = None, first.cpu
    if options.fresh_check and len(plan.check_rows):
        fresh_status, fresh_changed, fresh_facts, fresh_cpu = _fresh_check(job, plan, first)
        contexts[FRESH] = fresh_facts
        cpu_total = round(cpu_total + fresh_cpu, 3) if fresh_cpu is not None and cpu_total is not None else cpu_total
        if fresh_changed:
            changed |= fresh_changed
            check = BatchCheck(check.rows_checked, len(changed),
                               max(check.max_abs_change, fresh_facts["max_abs_change"]), check.tolerance)
    result = ScoreResult(
        status="scored", auc=metrics.auc if metrics else None, ap=metrics.ap if metrics else None,
        auc_se=metrics.auc_se if metrics else None, n=score.n, positives=metrics.positives if metrics else None,
        metric=score.metric, score=score.value, score_se=score.se, seconds=round(time.monotonic() - start, 3),
        train_seconds=round(timer.train_end - timer.train_start, 3),
        predict_seconds=round(timer.predict_end - timer.train_end, 3), cpu_seconds=cpu_total,
        train_cpu_seconds=first.train_cpu, rows_checked=check.rows_checked, rows_changed=check.rows_changed,
        max_abs_change=float(f"{check.max_abs_change:.3g}"), batch_dependent=check.batch_dependent,
        eval_score=eval_score, eval_score_reported=first.reported, fresh_check=fresh_status,
        batch_contexts_json=json.dumps(contexts), **base)
    return _done(result, run_id)


def _done(result: ScoreResult, run_id: str | None) -> ScoreResult:
    log.info("score.done", run_id=run_id, dataset=result.dataset, status=result.status, reason=result.reason,
             metric=result.metric, score=result.score, eval_score=result.eval_score, batch_dependent=result.batch_dependent,
             fresh_check=result.fresh_check, seconds=result.seconds)
    return result


# --- one container -------------------------------------------------------------------------------------------


class _Died(Exception):
    """The runner's process ended or stopped answering; post-mortem decides why."""

    def __init__(self, phase: str, timed_out: bool, note: str) -> None:
        super().__init__(note)
        self.phase, self.timed_out, self.note = phase, timed_out, note


def _score_in_container(job: _Scoring, plan: BatchPlan, timer: _Timer, role: str) -> _Answers:
    """Retrain in a fresh container and answer `plan`. Raises UnscorableArtifact for the scored code's
    failures (post-mortem included), ScorerError/InfraError for ours."""
    # bind-mounted; named by the scoring process, so what a process left behind is told from its neighbours'
    with tempfile.TemporaryDirectory(prefix=f"sbx-score-{os.getpid()}-", dir=job.mount_parent) as tmp:
        sock_dir = Path(tmp)
        sock_dir.chmod(0o755)
        with ScorerContainer(job.client, job.image, sock_dir, _phase_limits(job.options, plan, job.space),
                             run_id=job.run_id, dataset=job.dataset, env_run_id=job.env_run_id,
                             experiment=job.experiment, experiments_left=job.experiments_left, role=role,
                             model=job.model) as box:
            try:
                answers = _drive(box, job, plan, timer)
            except (_Died, UnscorableArtifact) as exc:
                failure = _post_mortem(box, exc) if isinstance(exc, _Died) else exc
                failure.cpu_seconds = box.cpu_seconds()
                raise failure from None
            answers.cpu = box.cpu_seconds()
            assert box.watch is not None
            box.watch.enter("done")
            answers.train_cpu = box.watch.used.get("training")
            return answers


def _phase_limits(options: ScoreOptions, plan: BatchPlan, space: RowSpace) -> ScoreOptions:
    """Predicting gets the experiment's CPU allowance for every training + evaluation file's worth of rows
    sent (an experiment handles those rows within it)."""
    if options.predict_cpu_limit_s is None:
        return options
    per = max(1, space.layout.n_eval + space.layout.n_train)
    factor = max(1.0, plan.rows_sent / per)
    return options.model_copy(update={"predict_cpu_limit_s": round(options.predict_cpu_limit_s * factor, 1)})


def _drive(box: ScorerContainer, job: _Scoring, plan: BatchPlan, timer: _Timer) -> _Answers:
    options, space = job.options, job.space
    box.start()
    conn = box.accept()
    setup_deadline = time.monotonic() + options.connect_timeout_s
    try:
        hello = protocol.recv_frame(conn, deadline=setup_deadline)
        if hello.kind != protocol.HELLO or hello.json().get("version") != protocol.PROTOCOL_VERSION:
            raise ScorerError(f"the scorer runner speaks another protocol: {hello.payload[:200]!r}")
        protocol.send_frame(conn, protocol.CONFIG, json.dumps({"predict": job.scoring.predict,
                                                               "columns": job.scoring.columns}).encode(),
                            deadline=setup_deadline)
        protocol.send_frame(conn, protocol.REPO, job.tar, deadline=setup_deadline)
        started = protocol.recv_frame(conn, deadline=setup_deadline)
        if started.kind != protocol.STARTED:
            raise ScorerError(f"the scorer runner sent {started.kind!r} instead of STARTED")
    except (protocol.PeerClosed, protocol.Deadline, protocol.ProtocolViolation) as exc:
        raise ScorerError(f"the scorer runner failed before the scored code ran ({exc}): "
                          f"{clean(box.output.snapshot()[0], 500)}") from None
    assert box.watch is not None
    box.watch.enter("training")
    timer.train_start = time.monotonic()
    try:
        frame = protocol.recv_frame(conn, deadline=timer.train_start + options.train_timeout_s)
    except protocol.Deadline:
        raise _Died("training", True, f"train.py ran longer than {options.train_timeout_s:g}s") from None
    except protocol.PeerClosed:
        raise _Died("training", False, "the process ended while train.py ran") from None
    except protocol.ProtocolViolation as exc:
        raise UnscorableArtifact("protocol_error", str(exc)) from None
    timer.train_end = time.monotonic()
    if frame.kind == protocol.FAILED:
        box.output.settle()
        raise _training_failure(frame, box)
    if frame.kind != protocol.READY:
        raise UnscorableArtifact("protocol_error", f"expected READY after training, got {frame.kind!r}")
    box.watch.enter("predicting")
    box.output.settle()
    head, tail = box.output.snapshot()  # before any holdout row is in the container
    width = (job.scoring.columns,) if job.scoring.task_type == "multiclass" else ()
    answers = _Answers(main=np.full((plan.n, *width), np.nan),
                       evals=np.full((space.layout.n_eval, *width), np.nan) if space.layout.n_eval else None,
                       reported=reported_score((head, tail), job.eval_line, job.scoring.info.bounded))
    check_rows = set(plan.check_rows.tolist())
    deadline = timer.train_end + options.predict_timeout_s
    for i, batch in enumerate(plan.batches):
        try:
            protocol.send_frame(conn, protocol.BATCH, space.batch_csv(batch.rows), deadline=deadline)
            frame = protocol.recv_frame(conn, deadline=deadline, preds_rows=len(batch.rows),
                                        preds_columns=job.scoring.columns)
        except protocol.Deadline:
            raise _Died("predicting", True, f"predicting took longer than {options.predict_timeout_s:g}s") from None
        except protocol.PeerClosed:
            raise _Died("predicting", False, f"the process ended while predicting a batch of {len(batch.rows)} "
                                             f"rows") from None
        except protocol.ProtocolViolation as exc:
            raise UnscorableArtifact("protocol_error", str(exc)) from None
        if frame.kind == protocol.FAILED:
            raise _predicting_failure(frame, len(batch.rows), job.selection, job.scoring.predict)
        if frame.kind != protocol.PREDS:
            raise UnscorableArtifact("protocol_error", f"expected predictions, got {frame.kind!r}")
        try:
            shape, values = protocol.decode_preds(frame.payload)
        except protocol.ProtocolViolation as exc:
            raise UnscorableArtifact("protocol_error", str(exc)) from None
        values = job.scoring.check(shape, values, len(batch.rows))
        if i == 0:
            answers.first_batch = values.copy()
        if batch.role == MAIN:
            answers.main[batch.rows] = values
        elif batch.role == EVAL:
            assert answers.evals is not None
            answers.evals[batch.rows - plan.n] = values
        else:
            mine = answers.again.setdefault(batch.role, {})
            for row, value in zip(batch.rows.tolist(), values, strict=True):
                if row in check_rows:
                    mine[row] = value.copy() if width else float(value)
    timer.predict_end = time.monotonic()
    try:
        protocol.send_frame(conn, protocol.END, deadline=time.monotonic() + 5)
    except (protocol.PeerClosed, protocol.Deadline):
        pass
    if plan.main_batches and np.isnan(answers.main).any():  # cannot happen with a correct plan
        raise ScorerError("the batch plan left rows without a prediction")
    return answers


def _training_failure(frame: protocol.Frame, box: ScorerContainer) -> UnscorableArtifact:
    """A FAILED frame before any holdout row was sent: the scored code's own words are kept, cleaned."""
    try:
        report = frame.json()
    except protocol.ProtocolViolation as exc:
        return UnscorableArtifact("protocol_error", str(exc))
    kind = report.get("kind")
    error, tail = clean(report.get("error", ""), 2000), clean(report.get("tail", ""), 4000)
    if kind == "train":
        detail = f"{error}\n{tail}".strip() if tail and error not in tail else (tail or error)
        if not detail:
            detail = clean(box.output.snapshot()[1] or box.output.snapshot()[0])
        return UnscorableArtifact("train_error", clean(detail))
    if kind == "no_predict":
        return UnscorableArtifact("no_predict_proba", clean(report.get("error", ""), 200)
                                  or "train.py leaves no callable prediction function")
    return UnscorableArtifact("protocol_error", f"an unexpected failure report while training ({clean(kind, 40)})")


def _predicting_failure(frame: protocol.Frame, rows: int, selection: CodeSelection,
                        fn: str = "predict_proba") -> UnscorableArtifact:
    """A FAILED frame once holdout rows were sent: described in the host's words only (text/README)."""
    try:
        report = frame.json()
    except protocol.ProtocolViolation as exc:
        return UnscorableArtifact("protocol_error", str(exc))
    kind = report.get("kind")
    if kind == "predict":
        name = exception_name(report.get("error")) or "an exception"
        place = place_in_code(report.get("at"), selection.python_files())
        where = f" at {place}" if place else ""
        return UnscorableArtifact("predict_error", f"{fn} raised {name}{where} in a batch of {rows} rows "
                                                   f"(no text of it is kept once holdout rows were sent)")
    if kind == "shape":
        return UnscorableArtifact("wrong_shape", f"{fn} did not return one number per row for a batch "
                                                 f"of {rows} rows")
    if kind == "dtype":
        return UnscorableArtifact("not_numeric", f"{fn} returned text (strings), not numbers, for a batch of "
                                                 f"{rows} rows")
    return UnscorableArtifact("protocol_error", "an unexpected failure report while predicting")


def _post_mortem(box: ScorerContainer, died: _Died) -> UnscorableArtifact:
    """Why the runner's process stopped answering: a limit of the watch, timeout, OOM, or another death.
    The output's tail is kept only for a death while training (before any holdout row was sent)."""
    tail = clean(box.output.snapshot()[1] or box.output.snapshot()[0], 3000) if died.phase == "training" else ""
    if box.watch is not None and box.watch.tripped is not None:
        reason, detail = box.watch.tripped
        return UnscorableArtifact(reason, f"{detail}\n{tail}".strip())
    if died.timed_out:
        return UnscorableArtifact("timeout", f"{died.note}\n{tail}".strip())
    code = box.exit_code(wait_s=5.0)
    if box.oom_killed(code):
        return UnscorableArtifact("oom", f"killed at the {box.options.memory_mb} MB memory limit while {died.phase} "
                                         f"(exit {code})\n{tail}".strip())
    return UnscorableArtifact("crashed", f"{died.note} (exit {code})\n{tail}".strip())


def _unscorable(exc: UnscorableArtifact, base: dict[str, Any], start: float, timer: _Timer) -> ScoreResult:
    train_s = round(timer.train_end - timer.train_start, 3) if timer.train_end else None
    return ScoreResult(status="unscorable", reason=exc.reason, detail=clean(exc.detail) or None,
                       seconds=round(time.monotonic() - start, 3), train_seconds=train_s,
                       cpu_seconds=getattr(exc, "cpu_seconds", None), **base)


# --- the second check, in a fresh container ---------------------------------------------------------------------


def _fresh_check(job: _Scoring, plan: BatchPlan, first: _Answers) -> tuple[str, set[int], dict[str, Any],
                                                                            float | None]:
    """Retrain in a fresh container; replay the first batch (a control), then the check rows in a new
    training-size context where this process sees them first. Returns (status, the rows that changed when
    the check is conclusive, facts for the record, CPU-seconds). A failure of the scored code here makes the status
    `failed: <reason>` (the audit then cannot call the run clear of batch statistics)."""
    again = fresh_plan(plan, seed=job.options.seed)
    job = replace(job, options=job.options.model_copy(update={"eval_rows": False}))
    try:
        answers = _score_in_container(job, again, _Timer(), role="fresh")
    except UnscorableArtifact as exc:
        log.info("score.fresh_check_failed", run_id=job.run_id, reason=exc.reason)
        return f"failed: {exc.reason}", set(), {"status": "failed", "reason": exc.reason}, None
    assert answers.first_batch is not None and first.first_batch is not None
    noise = float(np.max(row_change(answers.first_batch, first.first_batch))) if len(first.first_batch) else 0.0
    replayed = set(plan.batches[0].rows.tolist())
    seen = {r: v for r, v in answers.again.get(FRESH, {}).items() if r not in replayed}
    rows = np.array(sorted(seen), dtype=int)
    tol = job.options.tolerance
    allowance = tol + (NOISE_FACTOR * noise if noise > tol else 0.0)
    change = row_change(np.array([seen[r] for r in rows], dtype=float), first.main[rows]) if len(rows) else np.zeros(0)
    changed = int((change > allowance).sum())
    facts: dict[str, Any] = {"rows_checked": len(rows), "rows_changed": changed,
             "max_abs_change": float(f"{change.max():.3g}") if len(rows) else 0.0,
             "replay_max_abs_change": float(f"{noise:.3g}"), "tolerance": allowance}
    if changed:
        status = "changed"
    elif noise > tol:
        status = "inconclusive"   # training is not reproducible and no change stood out of its noise
    else:
        status = "agreed"
    facts["status"] = status
    moved = {int(r) for r, c in zip(rows, change, strict=True) if c > allowance}
    return status, moved, facts, answers.cpu


__all__ = ["REASONS", "ScoreResult", "score_repo"]
