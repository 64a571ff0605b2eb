"""Audit a delivered run: static traces over the delivered code the scorer gets (train.py and the modules it
imports, `compliance.repo`), with the evaluation data recognised by content in the whole delivered
workspace (`compliance.content`), and the scorer's batch check as evidence; stored in the ledger.
scored -> audited; an unscorable run's audit is stored too (a reviewer may want it) without a state change.
`reaudit_study` audits every delivered run of a study again.

An audit never leaves a run stuck: whatever breaks while the artifact is read or analysed (a file where a
folder is expected, source nested too deep, a name the file system refuses) gives `error` records saying
what broke, never `clear`, and the run moves on to `audited`. Only our own failures (`SbxError`s that are
not about the artifact: the ledger, the data) raise.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.compliance.content import ContentScan, EvalRows, find_eval_copies
from orchestrator.compliance.dynamic import with_batch_check
from orchestrator.compliance.records import AuditRecord, BatchCheck, Evidence
from orchestrator.compliance.repo import audit_repo
from orchestrator.compliance.store import save_records
from orchestrator.compliance.strings import TaskLayout
from orchestrator.compliance.traces import RULES, frame_statistics
from orchestrator.failures import DataError, LedgerUnavailable, SbxError, UnscorableArtifact
from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunState, ScoreResult
from orchestrator.log import get_logger
from orchestrator.scoring.artifact import select_code
from orchestrator.scoring.text import clean
from orchestrator.specs import TaskSpec, load_task

if TYPE_CHECKING:  # the run's context loads the Docker SDK; `sbx audit --study` never makes one
    from orchestrator.run.context import RunContext

log = get_logger(__name__)


def with_score_checks(records: list[AuditRecord], score: ScoreResult | None) -> list[AuditRecord]:
    """The scorer's batch check as evidence for `frame_statistics`: changed rows flag it; a second check
    that the scored code made fail leaves a `clear` static verdict undecided (`error`), never `clear`."""
    if score is None or score.rows_checked is None or score.rows_changed is None:
        return records
    check = BatchCheck(rows_checked=score.rows_checked, rows_changed=min(score.rows_changed, score.rows_checked),
                       max_abs_change=score.max_abs_change or 0.0, tolerance=score.tolerance or 0.0)
    out = []
    for record in records:
        if record.rule == frame_statistics.RULE:
            record = with_batch_check(record, check)
            fresh = score.fresh_check or ""
            if fresh.startswith("failed") and record.verdict == "clear":
                summary = (f"the second batch check, in a freshly started scorer, could not run: the scored code "
                           f"{fresh.removeprefix('failed: ')} there, so answers cached per row cannot be ruled out")
                record = record.model_copy(update={"verdict": "error", "evidence": [
                    *record.evidence, Evidence(kind="incomplete", summary=summary)]})
        out.append(record)
    return out


def task_layout(task: TaskSpec, data_dir: Path | None) -> TaskLayout:
    """What the traces know of a task: the function the scorer calls, the label column, the batch's columns
    (the prepared train.csv's header less the target) and the task.json an agent may read them from. The
    flight task's is the traces' default layout, field for field (a test keeps it so)."""
    default = TaskLayout()
    batch = default.batch_columns
    train = data_dir / "train.csv" if data_dir is not None else None
    if train is not None and train.is_file():
        with train.open(newline="", encoding="utf-8") as fh:
            header = next(csv.reader(fh), [])
        batch = tuple(c for c in header if c != task.target)
    settings: dict[str, object] = {"target": task.target, "positive_label": task.positive_label, "id_columns": []}
    return dataclasses.replace(default, entry=task.contract.predict, target=task.target, batch_columns=batch,
                               json_files=(("task.json", json.dumps(settings)),))


def committed_train(home: Home, run_id: str, delivered_sha256: str) -> Path:
    """The committed train.py a run delivered, as its copy-out kept it (named by its sha256)."""
    return home.delivered_dir(run_id) / "git" / "train" / f"{delivered_sha256}.py"


def content_scan(workspace: Path, data_dir: Path | None, target: str) -> ContentScan | None:
    """Every file of the delivered workspace holding evaluation rows, or None without the data to know."""
    if data_dir is None or not (data_dir / "eval.csv").is_file() or not (data_dir / "train.csv").is_file():
        return None
    return find_eval_copies(workspace, EvalRows.read(data_dir / "eval.csv", data_dir / "train.csv", target))


def audit_delivered(home: Home, run_id: str, delivered_sha256: str | None, *, data_dir: Path | None,
                    target: str, score: ScoreResult | None, layout: TaskLayout | None = None) -> list[AuditRecord]:
    """The records of one run's delivered code (no ledger). What the artifact breaks gives `error` records."""
    path = committed_train(home, run_id, delivered_sha256) if delivered_sha256 else None
    if path is None or not path.is_file():
        return _errors(run_id, "no committed train.py in the run's copy-out")
    workspace = home.delivered_dir(run_id) / "workspace"
    try:
        selection = select_code(workspace if workspace.is_dir() else path, train_py=path)
        scan = content_scan(workspace, data_dir, target) if workspace.is_dir() else None
        records = audit_repo(selection.python_files(), run_id=run_id, scan=scan, layout=layout)
    except UnscorableArtifact as exc:
        return _errors(run_id, f"{exc.reason}: {exc.detail}")
    except DataError:
        raise
    except SbxError:
        raise
    except Exception as exc:  # noqa: BLE001 - what the artifact holds broke the audit: an outcome, not ours
        log.error("audit.artifact_error", run_id=run_id, error=repr(exc)[:500], exc_info=True)
        return _errors(run_id, f"the audit broke on the delivered files: {type(exc).__name__}: {exc}")
    return with_score_checks(records, score)


def _errors(run_id: str, why: str) -> list[AuditRecord]:
    summary = clean(why, 1000)
    return [AuditRecord(run_id=run_id, file="train.py", rule=rule.name, rule_version=rule.version, verdict="error",
                        evidence=[Evidence(kind="parse_error", summary=summary)]) for rule in RULES]


def audit_run(home: Home, ledger: Ledger, run_id: str, *, data_dir: Path | None = None,
              task: TaskSpec | None = None) -> list[AuditRecord]:
    """Audit one delivered run and store the records; a missing artifact gives `error` records. Without
    `task` the run's task is loaded by name; without `data_dir` the task's prepared data in `home` is used
    for the content scan and the batch's columns (when it is there)."""
    record = ledger.get_run(run_id)
    if task is None:
        try:
            task = load_task(record.task)
        except (DataError, SbxError):
            task = None
    if task is not None:
        data_dir = data_dir or task.data_dir(home)
    records = audit_delivered(home, run_id, record.delivered_sha256, data_dir=data_dir,
                              target=task.target if task else "dep_delayed_15min",
                              score=ledger.scores.of_run(run_id).get("holdout"),
                              layout=task_layout(task, data_dir) if task else None)
    save_records(ledger, run_id, records)
    log.info("run.audited", run_id=run_id, verdicts={r.rule: r.verdict for r in records})
    return records


def audit(ctx: RunContext) -> list[AuditRecord]:
    """The lifecycle's audit step: store the records, and move a scored run to `audited`. A tests task has no
    compliance rules yet (they read train.py): its graded run moves on with no records."""
    if ctx.request.task.kind == "tests":
        if ctx.ledger.get_run(ctx.run_id).status == RunState.SCORED:
            ctx.ledger.advance(ctx.run_id, RunState.AUDITED)
        return []
    task = ctx.request.task if isinstance(ctx.request.task, TaskSpec) else None
    records = audit_run(ctx.home, ctx.ledger, ctx.run_id, data_dir=ctx.request.data_dir, task=task)
    if ctx.ledger.get_run(ctx.run_id).status == RunState.SCORED:
        ctx.ledger.advance(ctx.run_id, RunState.AUDITED)
    return records


@dataclass(frozen=True)
class StudyRun:
    run_id: str
    artifact: Path | None


def study_runs(home: Home, ledger: Ledger, study: str) -> list[StudyRun]:
    """The delivered runs of a study (by name or id) and where their committed train.py is."""
    found = ledger.get_study_by_name(study) or ledger.get_study(study)
    if found is None:
        raise LedgerUnavailable(f"no study {study!r} in the ledger {ledger.path}")
    out = []
    for run in ledger.list_runs(study_id=found.study_id):
        if run.delivered_sha256 is None:
            continue  # nothing was delivered (failed before copy-out): nothing to audit
        if run.meta.get("task_kind") == "tests":
            continue  # a graded coding delivery: no compliance rule reads it yet
        path = committed_train(home, run.run_id, run.delivered_sha256)
        out.append(StudyRun(run.run_id, path if path.exists() else None))
    return out


def reaudit_study(home: Home, ledger: Ledger, study: str) -> dict[str, list[AuditRecord]]:
    """Audit every delivered run of `study` again under the current rules; the older records are kept."""
    return {run.run_id: audit_run(home, ledger, run.run_id) for run in study_runs(home, ledger, study)}
