"""Audit records in the ledger: AuditRecords turned into the ledger's rows and back.

The ledger owns the tables (orchestrator/ledger/audits.py: append-only audits and overrides, the latest
audit per rule with the override made against its rule version); this module only converts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime

from pydantic import TypeAdapter

from orchestrator.compliance.plain import OverrideVerdict
from orchestrator.compliance.records import AuditRecord, Evidence, Override
from orchestrator.failures import DataError
from orchestrator.ledger import AuditRow, Ledger

_EVIDENCE = TypeAdapter(list[Evidence])


def to_row(record: AuditRecord) -> AuditRow:
    return AuditRow(rule=record.rule, rule_version=record.rule_version, verdict=record.verdict,
                    evidence_json=_EVIDENCE.dump_json(record.evidence).decode(),
                    notes_json=json.dumps(record.notes), file=record.file)


def from_row(run_id: str, row: AuditRow) -> AuditRecord:
    override = None
    if row.override is not None:
        # the ledger's CHECK constraints admit only the Literal verdicts; the row types them as str
        override = Override(verdict=row.override.verdict, reason=row.override.reason,  # type: ignore[arg-type]
                            at=datetime.fromtimestamp(row.override.created_at, UTC))
    return AuditRecord(run_id=run_id, file=row.file, rule=row.rule, rule_version=row.rule_version,
                       verdict=row.verdict,  # type: ignore[arg-type]  # as the override above
                       evidence=_EVIDENCE.validate_json(row.evidence_json), notes=json.loads(row.notes_json),
                       override=override)


def save_records(ledger: Ledger, run_id: str, records: Iterable[AuditRecord]) -> int:
    """Append one audit row per record for `run_id`, in one transaction; returns how many were written."""
    rows = []
    for record in records:
        if record.run_id is not None and record.run_id != run_id:
            raise DataError(f"record for run {record.run_id!r} saved under run {run_id!r}")
        rows.append(to_row(record))
    ledger.audits.save(run_id, rows)
    return len(rows)


def load_records(ledger: Ledger, run_id: str) -> list[AuditRecord]:
    """The latest audit of each rule for `run_id`, with its override applied."""
    return [from_row(run_id, row) for row in ledger.audits.latest(run_id)]


def add_override(ledger: Ledger, run_id: str, rule: str, verdict: OverrideVerdict, reason: str) -> Override:
    """Record a reviewer's verdict on the latest audit of (run, rule). There must be an audit to review."""
    override = Override(verdict=verdict, reason=reason)  # validates the verdict and a non-blank reason
    ledger.audits.add_override(run_id, rule, override.verdict, override.reason)
    return override
