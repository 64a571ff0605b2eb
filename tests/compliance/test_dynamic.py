from __future__ import annotations

import pytest

from orchestrator.compliance.dynamic import batch_check_record, with_batch_check
from orchestrator.compliance.records import AuditRecord, BatchCheck
from orchestrator.compliance.traces import frame_statistics


def test_changed_rows_flag_the_record() -> None:
    check = BatchCheck(rows_checked=1000, rows_changed=7, max_abs_change=0.12, tolerance=1e-6)
    record = batch_check_record(check, run_id="r1")
    assert record.rule == frame_statistics.RULE
    assert record.rule_version == frame_statistics.RULE_VERSION
    assert record.verdict == "flagged"
    assert record.evidence[0].kind == "batch_check"
    assert record.evidence[0].batch_check == check
    assert "7 of 1000 rows changed" in record.evidence[0].summary


def test_no_changed_rows_is_clear() -> None:
    check = BatchCheck(rows_checked=1000, rows_changed=0, max_abs_change=1e-9, tolerance=1e-6)
    assert batch_check_record(check).verdict == "clear"


def _static(verdict: str) -> AuditRecord:
    return AuditRecord(
        rule=frame_statistics.RULE, rule_version=frame_statistics.RULE_VERSION, verdict=verdict
    )  # type: ignore[arg-type]


def test_batch_check_joins_the_static_record() -> None:
    changed = BatchCheck(rows_checked=100, rows_changed=3, max_abs_change=0.2, tolerance=1e-6)
    unchanged = BatchCheck(rows_checked=100, rows_changed=0, max_abs_change=0.0, tolerance=1e-6)
    assert with_batch_check(_static("clear"), changed).verdict == "flagged"
    # a quiet sample does not clear a static flag, nor decide an undecided file
    assert with_batch_check(_static("flagged"), unchanged).verdict == "flagged"
    assert with_batch_check(_static("error"), unchanged).verdict == "error"
    merged = with_batch_check(_static("clear"), unchanged)
    assert merged.verdict == "clear" and merged.evidence[-1].kind == "batch_check"


def test_batch_check_is_evidence_for_frame_statistics_only() -> None:
    other = AuditRecord(rule="eval_labels_in_fit", rule_version="1", verdict="clear")
    with pytest.raises(ValueError, match="frame_statistics"):
        with_batch_check(other, BatchCheck(rows_checked=1, rows_changed=0, max_abs_change=0, tolerance=0))
