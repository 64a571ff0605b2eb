"""Audit every delivered run of a study from the ledger: the committed train.py each run delivered (kept
by its copy-out), with the scorer's batch check as evidence, stored in the ledger's audit tables."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from compliance.records import AuditRecord
from compliance.store import save_records
from orchestrator.failures import LedgerUnavailable
from orchestrator.ledger import Ledger
from orchestrator.log import get_logger

log = get_logger(__name__)

@dataclass(frozen=True)
class StudyRun:
    run_id: str
    artifact: Path | None


def study_runs(ledger: Ledger, study: str) -> list[StudyRun]:
    """The delivered runs of a study (by name or id) and where their committed train.py is."""
    from orchestrator.run.finish import delivered_dir

    found = ledger.get_study_by_name(study) or ledger.get_study(study)
    if found is None:
        raise LedgerUnavailable(f"no study {study!r} in the ledger {ledger.path}")
    out = []
    for run in ledger.list_runs(study_id=found.study_id):
        if run.delivered_sha256 is None:
            continue  # nothing was delivered (failed before copy-out): nothing to audit
        path = delivered_dir(run.run_id) / "git" / "train" / f"{run.delivered_sha256}.py"
        out.append(StudyRun(run.run_id, path if path.exists() else None))
    return out


def _train_py(artifact: Path) -> Path:
    return artifact / "train.py" if artifact.is_dir() else artifact


def audit_study(ledger: Ledger, study: str) -> dict[str, list[AuditRecord]]:
    """Audit every delivered run of `study` (static traces plus the stored batch check), store the records
    and return them by run. A run whose artifact is missing gets `error` records, so it cannot pass."""
    from orchestrator.run.finish import audit_train
    from orchestrator.scoring.store import load_scores

    out: dict[str, list[AuditRecord]] = {}
    for run in study_runs(ledger, study):
        path = run.artifact if run.artifact is not None else Path(f"<run {run.run_id}: no artifact>")
        with ledger.connection() as conn:
            holdout = load_scores(conn, run.run_id).get("holdout")
        records = audit_train(run.run_id, path, holdout)
        with ledger.connection() as conn:
            save_records(conn, run.run_id, records)
        out[run.run_id] = records
        log.info("audit.run", study=study, run_id=run.run_id, verdicts={r.rule: r.verdict for r in records})
    return out
