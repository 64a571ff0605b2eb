"""Evaluate a delivered run, per its task's kind: an `ml` task is scored on hidden data (orchestrator/scoring);
a `tests` task is graded by its hidden tests (run/evaluate_tests.py: the outcome is pass/fail with a reason).

delivered -> scored, or delivered -> failed (unscorable). Whatever the delivered code does is an outcome
(a ScoreResult). Our own failures (engine, scorer, data, ledger: the `SbxError`s that say so) raise and
leave the run `delivered`, so the evaluation can be redone. Anything else that breaks while the artifact is
read or scored is the artifact's doing (a file where a folder is expected, a name the file system refuses,
...): the run ends `failed/unscorable` with reason `artifact_error` and what broke, counted, never left
`delivered` for ever.

The scorer meets what the run's experiments met (scoring/container.py): the run's own sandbox image, its
cores, cpuset, memory and pids, the next experiment's number, the run's model path (closed: it refuses
every call, `closed_model_path`) when it had a model endpoint, and a CPU limit of what one experiment of the
budget may use (`scoring.options.budget_limits`).
"""

from __future__ import annotations

from pathlib import Path

import docker
import docker.errors

from orchestrator.failures import SbxError, UnscorableArtifact
from orchestrator.gateway.closed import ClosedRun
from orchestrator.gateway.limits import ModelLimits
from orchestrator.home import Home
from orchestrator.images import resolve_image
from orchestrator.ledger import GradedOutcome, Ledger, RunRecord, RunState, ScoreResult
from orchestrator.log import get_logger
from orchestrator.run.context import RunContext
from orchestrator.run.evaluate_tests import grade_run
from orchestrator.run.images import scorer_image_for
from orchestrator.run.request import RunRequest
from orchestrator.scoring.options import ScoreOptions, budget_limits
from orchestrator.scoring.service import score_repo
from orchestrator.scoring.tasktypes import TaskScoring
from orchestrator.scoring.text import clean
from orchestrator.specs.task import TaskSpec, TestsTaskSpec
from orchestrator.specs.usage import TokenUsage

log = get_logger(__name__)


def delivered_code(home: Home, run_id: str, delivered_sha256: str) -> tuple[Path, Path]:
    """What the scorer gets of a run: its delivered working tree, and the committed train.py that counts in
    place of the working tree's (task rule 5). The scorer takes code only from them (scoring/artifact.py)."""
    src = home.delivered_dir(run_id)
    committed = src / "git" / "train" / f"{delivered_sha256}.py"
    if not committed.is_file():
        raise UnscorableArtifact("no_train_py", "the committed train.py was not kept by the copy-out (past its caps)")
    return src / "workspace", committed


def scorer_image(client: docker.DockerClient, run_image: str | None,
                 task: TaskSpec | TestsTaskSpec | None = None) -> str:
    """The image the run's sandbox used (so the scored code meets what its experiments met), or, when that
    one is gone (a rescore long after), the current scorer image of the run's task: its environment's
    when it declares one (run/images.py), else the standard one."""
    if run_image:
        try:
            return str(client.images.get(run_image).id)
        except docker.errors.ImageNotFound:
            log.info("score.run_image_gone", image=run_image)
        except docker.errors.DockerException:
            pass
    return scorer_image_for(client, task) if isinstance(task, TaskSpec) else str(resolve_image(client, "scorer").id)


def closed_model_path(ledger: Ledger, run_id: str) -> ClosedRun | None:
    """The model path the scorer of this run serves, closed: what the run's gateway would answer its next
    call (its wire API; the first spent limit of those it opened with, at its final totals). None when the
    run had no model endpoint (no `model_usage` row): its experiments had no model path, nor has its scorer."""
    usage = ledger.usage.of_run(run_id)
    if usage is None:
        return None
    opened = ledger.events(run_id, "model.opened")
    given = opened[0].detail.get("limits", {}) if opened else {}
    limits = ModelLimits(calls=given.get("calls"), tokens=given.get("tokens"), cost_usd=given.get("cost_usd"))
    tokens = TokenUsage(input=usage.input_tokens, cached_input=usage.cached_input_tokens,
                   cache_write=usage.cache_write_tokens, output=usage.output_tokens, reasoning=usage.reasoning_tokens)
    return ClosedRun.spent(usage.api, limits, forwarded=usage.calls - usage.refused, usage=tokens,
                           cost=usage.cost_usd or 0.0)


def scoring_options(req: RunRequest, main: bool) -> ScoreOptions:
    """The run's scoring options with the scorer's limits taken from its budget. Datasets after the main
    one skip the evaluation rows and the batch check's large and fresh contexts (the main one has them)."""
    update = budget_limits(req.budget, req.resolved_cpuset())
    if not main:
        update |= {"eval_rows": False, "large_contexts": False, "fresh_check": False}
    return req.score_options.model_copy(update=update)


def artifact_failure(dataset: str, exc: BaseException) -> ScoreResult:
    """The score of an artifact whose reading or scoring broke on something it holds."""
    return ScoreResult(dataset=dataset, status="unscorable", reason="artifact_error",
                       detail=clean(f"{type(exc).__name__}: {exc}", 2000))


def score_delivered(home: Home, client: docker.DockerClient, req: RunRequest, record: RunRecord, dataset: str,
                    model: ClosedRun | None, artifact: Path | None = None) -> ScoreResult:
    """The score of run `record`'s delivered code on `dataset`, as the run's own evaluation gives it: its
    task, budget limits, scoring options, image, next experiment's number and closed model path. Writes
    nothing (a rescore's workers call it beside each other); raises only for our failures. `artifact`: a
    folder holding the code to score instead of the run's copy-out (its working tree counts as delivered)."""
    assert record.delivered_sha256 is not None or artifact is not None
    task = req.task
    assert isinstance(task, TaskSpec)  # data sets score ml tasks only; a tests task's run is graded instead
    main = bool(req.datasets) and dataset == req.datasets[0]
    try:
        if artifact is None:
            assert record.delivered_sha256 is not None
            workspace, committed = delivered_code(home, record.run_id, record.delivered_sha256)
        else:
            workspace, committed = artifact, None
        counted = record.experiments_counted or 0
        image = scorer_image(client, record.image, task)
        return score_repo(client, workspace, req.data_dir, dataset, image=image, mount_parent=home.mount_parent,
                          options=scoring_options(req, main), run_id=record.run_id,
                          scoring=TaskScoring.of(task), eval_line=task.contract.eval_line,
                          train_py=committed, experiment=max(1, min(req.budget.experiments, counted + 1)),
                          experiments_left=max(0, req.budget.experiments - counted), model=model)
    except UnscorableArtifact as exc:
        return ScoreResult(dataset=dataset, status="unscorable", reason=exc.reason, detail=clean(exc.detail) or None)
    except SbxError:
        raise
    except Exception as exc:  # noqa: BLE001 - not ours by type: what the artifact holds broke the scoring
        log.error("score.artifact_error", run_id=record.run_id, dataset=dataset, error=repr(exc)[:500],
                  exc_info=True)
        return artifact_failure(dataset, exc)


def save_score(ledger: Ledger, run_id: str, result: ScoreResult) -> None:
    """Store a score, with a `score_withheld` event when the scorer withheld files of the artifact."""
    ledger.scores.save(run_id, result)
    if result.withheld_count:
        ledger.add_event(run_id, "score_withheld", {"dataset": result.dataset, "count": result.withheld_count,
                                                    "first": [w["path"] for w in _withheld(result)[:20]]})


def score_dataset(ctx: RunContext, dataset: str) -> ScoreResult:
    """Score the run's delivered train.py on `dataset` and store the score. Raises only for our failures."""
    record = ctx.ledger.get_run(ctx.run_id)
    result = score_delivered(ctx.home, ctx.client, ctx.request, record, dataset,
                             closed_model_path(ctx.ledger, ctx.run_id))
    save_score(ctx.ledger, ctx.run_id, result)
    return result


def _withheld(result: ScoreResult) -> list[dict[str, object]]:
    import json

    try:
        listed = json.loads(result.withheld_json or "[]")
    except ValueError:
        return []
    return [w for w in listed if isinstance(w, dict)]


def needs_evaluation(req: RunRequest) -> bool:
    """Whether a delivered run is evaluated: a tests task always is; an ml task when it names datasets."""
    return req.task.kind == "tests" or bool(req.datasets)


def evaluate(ctx: RunContext) -> ScoreResult | GradedOutcome:
    """The main evaluation of a delivered run, by its task's kind; the run moves on."""
    if ctx.request.task.kind == "tests":
        return grade_run(ctx)
    return evaluate_ml(ctx)


def evaluate_ml(ctx: RunContext) -> ScoreResult:
    """An ml task's main evaluation: its score on the first dataset."""
    result = score_dataset(ctx, ctx.request.datasets[0])
    log.info("run.scored", run_id=ctx.run_id, status=result.status, auc=result.auc, reason=result.reason,
             batch_dependent=result.batch_dependent)
    if result.status == "unscorable":
        ctx.ledger.advance(ctx.run_id, RunState.FAILED, failure_class="unscorable",
                           reason=clean(f"{result.reason}: {(result.detail or '')[-500:]}", 600))
    else:
        ctx.ledger.advance(ctx.run_id, RunState.SCORED)
    return result


def missing_datasets(ledger: Ledger, run_id: str, datasets: tuple[str, ...]) -> list[str]:
    """Datasets an ml run still has to be scored on (a tests task's request names none)."""
    have = ledger.scores.of_run(run_id)
    return [d for d in datasets if d not in have]
