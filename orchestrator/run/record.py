"""A run's whole record: the ledger row, events and experiments, plus its scores and audit verdicts."""

from __future__ import annotations

from typing import Any

from compliance.records import is_compliant
from compliance.store import load_records
from orchestrator.ledger import Ledger
from orchestrator.scoring.store import load_scores, show_fields


def full_record(ledger: Ledger, run_id: str) -> dict[str, Any]:
    """`run_record_json` plus `holdout_auc`, `holdout_ap`, `holdout_auc_se`, `batch_dependent`,
    `scoring_error`, `scores` (every dataset), `compliance` (rule -> verdict after overrides) and
    `compliant` (None until audited)."""
    record = ledger.run_record_json(run_id)
    with ledger.connection() as conn:
        scores = load_scores(conn, run_id)
        audits = load_records(conn, run_id)
    record.update(show_fields(scores))
    record["scores"] = {name: s.to_json() for name, s in scores.items()}
    record["compliance"] = {a.rule: a.final_verdict for a in audits}
    record["compliant"] = is_compliant(audits) if audits else None
    return record
