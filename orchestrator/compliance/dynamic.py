"""The scorer's dynamic batch check as evidence for `frame_statistics`.

The scorer predicts a sample of holdout rows twice, in different batch contexts, and counts rows whose
prediction moved by more than a tolerance. A row that changes is direct evidence that predictions depend on
the batch: the record is `flagged` whenever `rows_changed > 0`, whatever the static trace found.
"""

from __future__ import annotations

from orchestrator.compliance.records import AuditRecord, BatchCheck, Evidence
from orchestrator.compliance.traces import frame_statistics

__all__ = ["BatchCheck", "batch_check_evidence", "batch_check_record", "with_batch_check"]


def batch_check_evidence(check: BatchCheck) -> Evidence:
    """The check as one piece of evidence, with a sentence a reviewer can read."""
    if check.rows_changed:
        summary = (
            f"{check.rows_changed} of {check.rows_checked} rows changed prediction when scored in a "
            f"different batch (largest change {check.max_abs_change:.3g}, tolerance {check.tolerance:.3g})"
        )
    else:
        summary = (
            f"no row of {check.rows_checked} changed prediction by more than {check.tolerance:.3g} "
            f"when scored in a different batch (largest change {check.max_abs_change:.3g})"
        )
    return Evidence(kind="batch_check", summary=summary, batch_check=check)


def batch_check_record(
    check: BatchCheck, *, run_id: str | None = None, file: str | None = None
) -> AuditRecord:
    """A `frame_statistics` record from the dynamic check alone: flagged when any row changed."""
    return AuditRecord(
        run_id=run_id,
        file=file,
        rule=frame_statistics.RULE,
        rule_version=frame_statistics.RULE_VERSION,
        verdict="flagged" if check.rows_changed > 0 else "clear",
        evidence=[batch_check_evidence(check)],
    )


def with_batch_check(record: AuditRecord, check: BatchCheck) -> AuditRecord:
    """The static `frame_statistics` record with the batch check added to its evidence. Changed rows flag
    it; an unchanged batch does not clear a static flag (the sample may miss the rows a feature affects),
    and does not turn an undecided (`error`) static result into `clear` either."""
    if record.rule != frame_statistics.RULE:
        raise ValueError(f"the batch check is evidence for {frame_statistics.RULE}, not {record.rule}")
    verdict = "flagged" if check.rows_changed > 0 else record.verdict
    return record.model_copy(
        update={"verdict": verdict, "evidence": [*record.evidence, batch_check_evidence(check)]}
    )
