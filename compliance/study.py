"""Audit every run of a study from the ledger.

The runs table belongs to the ledger; this module only reads it. The contract it relies on: a `runs` table
with a run id column (`run_id`), a study column (`study_id`) and a column with the path of the delivered
artifact (`artifact_path`: the delivered `train.py`, or a folder holding it). When the table or one of those
columns is missing the audit stops with `LedgerUnavailable` naming what is missing, rather than guessing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from compliance.audit import audit_file
from compliance.records import AuditRecord
from compliance.store import ensure_schema, save_records
from orchestrator.failures import LedgerUnavailable
from orchestrator.log import get_logger

log = get_logger(__name__)

RUNS_COLUMNS = ("run_id", "study_id", "artifact_path")


@dataclass(frozen=True)
class StudyRun:
    run_id: str
    artifact: Path | None


def study_runs(conn: sqlite3.Connection, study: str) -> list[StudyRun]:
    """The runs of a study and where their delivered train.py is."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "runs" not in tables:
        raise LedgerUnavailable(
            "sbx audit --study is not available until the runs ledger exists (no `runs` table in the ledger)"
        )
    columns = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    missing = [c for c in RUNS_COLUMNS if c not in columns]
    if missing:
        raise LedgerUnavailable(f"the runs table lacks column(s) {', '.join(missing)} that the audit reads")
    rows = conn.execute("SELECT run_id, artifact_path FROM runs WHERE study_id = ? ORDER BY run_id", (study,))
    return [StudyRun(str(run_id), Path(path) if path else None) for run_id, path in rows]


def _train_py(artifact: Path) -> Path:
    return artifact / "train.py" if artifact.is_dir() else artifact


def audit_study(conn: sqlite3.Connection, study: str) -> dict[str, list[AuditRecord]]:
    """Audit every run of `study`, store the records and return them by run. A run whose artifact is
    missing gets `error` records, so it cannot pass as compliant."""
    runs = study_runs(conn, study)
    ensure_schema(conn)
    out: dict[str, list[AuditRecord]] = {}
    for run in runs:
        path = (
            _train_py(run.artifact) if run.artifact is not None else Path(f"<run {run.run_id}: no artifact>")
        )
        records = audit_file(path, run_id=run.run_id)
        save_records(conn, run.run_id, records)
        out[run.run_id] = records
        log.info(
            "audit.run", study_id=study, run_id=run.run_id, verdicts={r.rule: r.verdict for r in records}
        )
    return out
