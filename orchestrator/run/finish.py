"""After delivery: score the delivered train.py on the holdout, audit it, and move the run on.

delivered -> scored -> audited, or delivered -> failed (unscorable). Audits are stored for unscorable
runs too (a reviewer may want them). Whatever the code does is an outcome; only our own faults
(engine, scorer, data) raise, and they leave the run `delivered` so scoring can be retried.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import docker

from compliance import audit_file
from compliance.dynamic import with_batch_check
from compliance.records import AuditRecord, BatchCheck
from compliance.store import save_records
from compliance.traces import frame_statistics
from orchestrator import paths
from orchestrator.images import resolve_image
from orchestrator.ledger import Ledger, RunState
from orchestrator.log import get_logger
from orchestrator.scoring.service import ScoreOptions, ScoreResult, score_repo
from orchestrator.scoring.store import load_scores, save_score
from orchestrator.specs import TaskSpec

log = get_logger(__name__)


def delivered_dir(run_id: str) -> Path:
    return paths.sbx_home() / "runs" / run_id / "delivered"


def scoring_repo(run_id: str, delivered_sha256: str) -> Path:
    """The repo the scorer gets: the delivered working tree with train.py replaced by the committed
    version (task rule 5: the committed train.py is what counts). Built once per run."""
    src = delivered_dir(run_id)
    committed = src / "git" / "train" / f"{delivered_sha256}.py"
    if not committed.is_file():
        raise FileNotFoundError(f"{committed}: the committed train.py of run {run_id} is not in its copy-out")
    repo = src.parent / "scoring-repo"
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(src / "workspace", repo, symlinks=False)
    shutil.copyfile(committed, repo / "train.py")
    return repo


def audit_train(run_id: str, train_py: Path, score: ScoreResult | None) -> list[AuditRecord]:
    """Static traces over a delivered train.py, with the scorer's batch check as evidence."""
    records = audit_file(train_py, run_id=run_id)
    if score is None or score.rows_checked is None or score.rows_changed is None:
        return records
    check = BatchCheck(rows_checked=score.rows_checked, rows_changed=score.rows_changed,
                       max_abs_change=score.max_abs_change or 0.0, tolerance=score.tolerance)
    return [with_batch_check(r, check) if r.rule == frame_statistics.RULE else r for r in records]


def _score(client: docker.DockerClient, repo: Path, run_id: str, task: TaskSpec, dataset: str,
           data_dir: Path | None, options: ScoreOptions | None) -> ScoreResult:
    """One scoring of a run's scoring repo on `dataset`, with the task's target, label and eval line."""
    return score_repo(client, repo, data_dir or task.data_dir(), dataset, image=resolve_image(client, "scorer").id,
                      options=options, run_id=run_id, target=task.target, positive=task.positive_label,
                      eval_line=task.contract.eval_line)


def score_and_audit(client: docker.DockerClient, ledger: Ledger, run_id: str, task: TaskSpec,
                    data_dir: Path | None = None, options: ScoreOptions | None = None) -> ScoreResult | None:
    """Score on the holdout and audit a delivered run; returns the score (None when not delivered)."""
    record = ledger.get_run(run_id)
    if record.status != RunState.DELIVERED or record.delivered_sha256 is None:
        return None
    repo = scoring_repo(run_id, record.delivered_sha256)
    result = _score(client, repo, run_id, task, "holdout", data_dir, options)
    records = audit_train(run_id, repo / "train.py", result)
    with ledger.connection() as conn:
        save_score(conn, run_id, result)
        save_records(conn, run_id, records)
    log.info("run.scored", run_id=run_id, status=result.status, auc=result.auc, reason=result.reason,
             batch_dependent=result.batch_dependent, flags=[r.rule for r in records if r.verdict != "clear"])
    if result.status == "unscorable":
        ledger.advance(run_id, RunState.FAILED, failure_class="unscorable",
                       reason=f"{result.reason}: {(result.detail or '')[-500:]}")
        return result
    ledger.advance(run_id, RunState.SCORED)
    ledger.advance(run_id, RunState.AUDITED)
    return result


def score_extra_dataset(client: docker.DockerClient, ledger: Ledger, run_id: str, task: TaskSpec, dataset: str,
                        data_dir: Path | None = None, options: ScoreOptions | None = None) -> ScoreResult | None:
    """Score a scored run's delivered train.py on another prepared dataset (e.g. `later`), once."""
    record = ledger.get_run(run_id)
    if record.delivered_sha256 is None:
        return None
    with ledger.connection() as conn:
        if dataset in load_scores(conn, run_id):
            return None
    result = _score(client, scoring_repo(run_id, record.delivered_sha256), run_id, task, dataset, data_dir, options)
    with ledger.connection() as conn:
        save_score(conn, run_id, result)
    return result
