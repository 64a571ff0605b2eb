from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from orchestrator.compliance.records import (
    AuditRecord,
    BatchCheck,
    Evidence,
    EvidenceStep,
    Override,
    is_compliant,
)


def _record(rule: str, verdict: str, override: Override | None = None) -> AuditRecord:
    return AuditRecord(run_id="r1", rule=rule, rule_version="1", verdict=verdict, override=override)  # type: ignore[arg-type]


def test_compliant_only_when_every_rule_is_clear() -> None:
    assert is_compliant([_record("a", "clear"), _record("b", "clear")])
    assert not is_compliant([_record("a", "clear"), _record("b", "flagged")])
    assert not is_compliant([_record("a", "error")])
    assert not is_compliant([])


def test_override_replaces_the_verdict_not_the_evidence() -> None:
    evidence = [
        Evidence(kind="static_trace", summary="x", steps=[EvidenceStep(file="t.py", line=3, code="f()")])
    ]
    record = AuditRecord(rule="a", rule_version="1", verdict="flagged", evidence=evidence)
    reviewed = record.with_override(Override(verdict="clear", reason="fit is on a copy of train"))
    assert reviewed.final_verdict == "clear"
    assert reviewed.verdict == "flagged"
    assert reviewed.evidence == evidence
    assert is_compliant([reviewed])
    assert not is_compliant([_record("a", "clear", Override(verdict="flagged", reason="manual finding"))])


def test_an_error_can_be_overridden_by_a_reviewer() -> None:
    assert is_compliant([_record("a", "error", Override(verdict="clear", reason="read it by hand"))])


@pytest.mark.parametrize("reason", ["", "   "])
def test_override_needs_a_reason(reason: str) -> None:
    with pytest.raises(ValidationError):
        Override(verdict="clear", reason=reason)


def test_models_reject_unknown_fields_and_verdicts() -> None:
    with pytest.raises(ValidationError):
        AuditRecord(rule="a", rule_version="1", verdict="clear", surprise=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        AuditRecord(rule="a", rule_version="1", verdict="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Override(verdict="error", reason="x")  # type: ignore[arg-type]


def test_batch_check_validates_counts() -> None:
    with pytest.raises(ValidationError):
        BatchCheck(rows_checked=10, rows_changed=11, max_abs_change=0.1, tolerance=1e-6)
    with pytest.raises(ValidationError):
        BatchCheck(rows_checked=-1, rows_changed=0, max_abs_change=0.0, tolerance=1e-6)


def test_records_round_trip_through_json() -> None:
    record = AuditRecord(
        run_id="r1",
        file="train.py",
        rule="a",
        rule_version="2",
        verdict="flagged",
        evidence=[
            Evidence(
                kind="static_trace",
                summary="s",
                steps=[EvidenceStep(file="train.py", line=1, code="x = 1", names=["x"], note="n")],
            )
        ],
        override=Override(verdict="clear", reason="ok", at=datetime(2026, 1, 1, tzinfo=UTC)),
    )
    assert AuditRecord.model_validate_json(record.model_dump_json()) == record
