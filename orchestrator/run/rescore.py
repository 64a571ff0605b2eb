"""Re-score audited runs on another data set (`sbx rescore`): the lifecycle's own "score a dataset" step
(run/evaluate.py `score_delivered`) run over a pool of scorer containers, so a rescore gives, for the same
run and data set, exactly what the run's lifecycle gives.

Each run is scored as it was run: its own task (by the name it recorded), its budget and scoring options
(from the configuration its `prepare` step stored in its meta), its image when the engine still has it,
its next experiment's number and its closed model path. A run recorded without that configuration (made
by hand, or before configurations were stored) falls back to its task and budget by name and the default
scoring options. Workers only score; this thread reads the ledger and writes every score.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator import engine
from orchestrator.agents import AgentSpec
from orchestrator.failures import ConfigError
from orchestrator.gateway.closed import ClosedRun
from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunRecord, ScoreResult
from orchestrator.log import get_logger
from orchestrator.run.config_hash import task_spec
from orchestrator.run.evaluate import closed_model_path, save_score, score_delivered
from orchestrator.run.request import RunRequest
from orchestrator.scoring.options import ScoreOptions
from orchestrator.scoring.rescore import Progress, RescoreReport, rescore
from orchestrator.specs import load_task
from orchestrator.specs.budget import Budget, load_budget
from orchestrator.specs.task import TaskSpec

log = get_logger(__name__)


@dataclass(frozen=True)
class StoredRun:
    """What scoring one stored run needs, read from the ledger before any worker starts."""
    record: RunRecord
    request: RunRequest
    model: ClosedRun | None


def run_task(record: RunRecord, given: dict[str, TaskSpec]) -> TaskSpec:
    """The task run `record` ran: one of `given` (loaded from --task) by its name, else the folder the run
    recorded it was loaded from, else a shipped task by its name."""
    if record.task in given:
        return given[record.task]
    where = record.meta.get("task_path")
    try:
        if isinstance(where, str) and (Path(where) / "task.yaml").is_file():
            task = load_task(where)
            if task.name == record.task:
                return task
        return load_task(record.task)
    except ConfigError as exc:
        raise ConfigError(f"run {record.run_id}: its task {record.task!r} cannot be loaded here ({exc}); "
                          "give its folder with --task PATH") from None


def stored_request(home: Home, record: RunRecord, data_dir: Path | None = None,
                   tasks: dict[str, TaskSpec] | None = None) -> RunRequest:
    """The parts of run `record`'s request that its scoring reads, as the run recorded them."""
    config: dict[str, Any] = record.meta.get("config") or {}
    task = run_task(record, tasks or {})
    stored_spec = (config.get("task") or {}).get("spec")
    if stored_spec is not None and stored_spec != task_spec(task):
        log.warning("rescore.task_changed", run_id=record.run_id, task=record.task,
                    message="the task's spec differs from the one the run recorded; it is scored with today's")
    try:
        if "budget" in config:
            budget = Budget(**config["budget"])
        elif record.budget_name:
            budget = load_budget(record.budget_name)
        else:
            raise ConfigError(f"run {record.run_id} recorded neither a configuration nor a budget name")
        options = ScoreOptions(**config["score_options"]) if "score_options" in config else ScoreOptions()
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"run {record.run_id}: its stored configuration does not load: {exc}") from None
    datasets = tuple(config.get("datasets") or ("holdout",))
    agent = AgentSpec(name=record.agent or "unknown", kind="command", host_path=None, container_path=None, command=())
    return RunRequest(task=task, budget=budget, agent=agent, data_dir=data_dir or task.data_dir(home),
                      study_id=record.study_id, datasets=datasets, score_options=options)


def rescore_runs(home: Home, ledger: Ledger, run_ids: list[str], dataset: str, *, data_dir: Path | None = None,
                 artifacts: Path | None = None, parallel: int = 2, force: bool = False,
                 tasks: dict[str, TaskSpec] | None = None,
                 on_progress: Callable[[Progress], None] | None = None) -> RescoreReport:
    """Score each run's delivered code on `dataset` (those that have a score there are skipped unless
    `force`). `artifacts`: a folder holding each run's code as RUN_ID/ instead of its copy-out; `tasks`:
    tasks by name, for runs whose task is neither shipped nor where the run found it."""
    stored: dict[str, StoredRun] = {}
    for run_id in dict.fromkeys(run_ids):
        record = ledger.get_run(run_id)
        if artifacts is None and record.delivered_sha256 is None:
            raise ConfigError(f"run {run_id} delivered no train.py: nothing to score")
        stored[run_id] = StoredRun(record, stored_request(home, record, data_dir, tasks),
                                   closed_model_path(ledger, run_id))

    def artifact_dir(run_id: str) -> Path:
        return artifacts / run_id if artifacts is not None else home.delivered_dir(run_id)

    def score(run_id: str, folder: Path) -> ScoreResult:
        if artifacts is not None and not folder.is_dir():
            raise ConfigError(f"run {run_id}: no artifact at {folder}")
        run = stored[run_id]
        client = engine.fresh_client()  # one client per worker thread
        try:
            return score_delivered(home, client, run.request, run.record, dataset, run.model,
                                   artifact=folder if artifacts is not None else None)
        finally:
            client.close()

    return rescore(ledger, list(stored), dataset, artifact_dir=artifact_dir, score=score, parallel=parallel,
                   on_progress=on_progress, force=force, save=lambda run_id, result: save_score(ledger, run_id, result))
