"""compliance/plain.py reads audit rows into exactly what pydantic's records dump (issue 23: `sbx show` of an
audited run without importing pydantic): the same dicts, key for key and in order, for every row the write
path writes, and for any other row the same dict or the same error as through pydantic."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.compliance import plain
from orchestrator.compliance.plain import audit_json
from orchestrator.compliance.records import AuditRecord, BatchCheck, Evidence, EvidenceStep, Override
from orchestrator.compliance.store import from_row, to_row
from orchestrator.ledger import AuditRow
from orchestrator.ledger.audits import OverrideRow


def _through_pydantic(row: AuditRow) -> Any:
    """What `sbx show` printed of the row before: the record's JSON dump, or the error reading it raised."""
    try:
        record = from_row("r", row)
    except Exception as exc:  # noqa: BLE001  # the error itself is what is compared
        return ("raises", type(exc), str(exc))
    return record.model_dump(mode="json", exclude={"run_id"}) | {"final_verdict": record.final_verdict}


def _plainly(row: AuditRow) -> Any:
    try:
        return audit_json("r", row)
    except Exception as exc:  # noqa: BLE001
        return ("raises", type(exc), str(exc))


def _same(row: AuditRow) -> Any:
    got = _plainly(row)
    want = _through_pydantic(row)
    assert got == want and (not isinstance(want, dict) or list(got) == list(want)), row
    if isinstance(want, dict):  # the key order of every nested dict too: json.dumps compares it
        assert json.dumps(got) == json.dumps(want)
    return got


def test_the_field_lists_and_literals_are_the_models() -> None:
    assert plain.EVIDENCE_FIELDS == tuple(Evidence.model_fields)
    assert plain.STEP_FIELDS == tuple(EvidenceStep.model_fields)
    assert plain.CHECK_FIELDS == tuple(BatchCheck.model_fields)
    dumped = AuditRecord(rule="x", rule_version="1", verdict="clear").model_dump(exclude={"run_id"})
    assert list(dumped) == ["file", "rule", "rule_version", "verdict", "evidence", "notes", "override"]
    assert get_args(AuditRecord.model_fields["verdict"].annotation) == get_args(plain.Verdict)
    assert get_args(Override.model_fields["verdict"].annotation) == get_args(plain.OverrideVerdict)
    assert get_args(Evidence.model_fields["kind"].annotation) == get_args(plain.EvidenceKind)


_text = st.text(max_size=12)
_count = st.integers(min_value=0, max_value=10**6)
_real = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)
_steps = st.builds(EvidenceStep, file=_text, line=_count, code=_text, names=st.lists(_text, max_size=3),
                   note=_text, scope=_text)
_checks = st.tuples(_count, _count, _real, _real).map(
    lambda t: BatchCheck(rows_checked=max(t[:2]), rows_changed=min(t[:2]), max_abs_change=t[2], tolerance=t[3]))
_evidence = st.builds(Evidence, kind=st.sampled_from(get_args(plain.EvidenceKind)), summary=_text,
                      steps=st.lists(_steps, max_size=3), batch_check=st.none() | _checks)
_records = st.builds(AuditRecord, file=st.none() | _text, rule=_text, rule_version=_text,
                     verdict=st.sampled_from(get_args(plain.Verdict)), evidence=st.lists(_evidence, max_size=3),
                     notes=st.lists(_text, max_size=3))
_overrides = st.none() | st.builds(
    OverrideRow, verdict=st.sampled_from(get_args(plain.OverrideVerdict)),
    reason=_text.filter(lambda r: bool(r.strip())), created_at=st.floats(min_value=0, max_value=4e9))


@settings(max_examples=300, deadline=None)
@given(_records, _overrides)
def test_every_row_the_write_path_writes_reads_as_its_record_dumps(record: AuditRecord,
                                                                   override: OverrideRow | None) -> None:
    row = to_row(record)
    row = AuditRow(row.rule, row.rule_version, row.verdict, row.evidence_json, row.notes_json, row.file,
                   1.0, override)
    _same(row)
    plain._canonical(row)  # and it was read without pydantic


def _row(evidence: str = "[]", notes: str = "[]", verdict: str = "clear", override: OverrideRow | None = None,
         **fields: Any) -> AuditRow:
    return AuditRow(fields.get("rule", "r"), fields.get("rule_version", "1"), verdict, evidence, notes,
                    fields.get("file"), 1.0, override)


_STEP = '{"file": "t.py", "line": 3, "code": "c", "names": [], "note": "", "scope": ""}'
_CHECK = '{"rows_checked": 2, "rows_changed": 1, "max_abs_change": 0.5, "tolerance": 0.1}'


@pytest.mark.parametrize("row", [
    # defaults left out, an int where a float belongs, a float where an int belongs: pydantic fills and coerces
    _row('[{"kind": "content", "summary": "s"}]'),
    _row('[{"kind": "batch_check", "summary": "s", "steps": [], "batch_check": '
         '{"rows_checked": 2, "rows_changed": 1, "max_abs_change": 0, "tolerance": 1}}]'),
    _row('[{"kind": "static_trace", "summary": "s", "batch_check": null, "steps": '
         '[{"file": "t.py", "line": 3.0, "code": "c"}]}]'),
    _row('[{"summary": "s", "kind": "content", "batch_check": null, "steps": []}]'),  # another key order
    _row('[{"kind": "content", "summary": "a", "summary": "b", "steps": [], "batch_check": null}]'),  # repeated
    _row('[{"kind": "content", "summary": "s", "steps": [], "batch_check": '
         '{"rows_checked": 2, "rows_changed": 1, "max_abs_change": 0.5, "tolerance": 1e400}}]'),  # inf
    _row('[{"kind": "content", "summary": "caf\\u00e9 \\ud83d\\ude00", "steps": [], "batch_check": null}]'),
    # invalid: each raises what it raised through pydantic
    _row('[{"kind": "content", "summary": "s", "steps": [], "batch_check": null, "extra": 1}]'),
    _row('[{"kind": "guess", "summary": "s", "steps": [], "batch_check": null}]'),
    _row('[{"kind": ["content"], "summary": "s", "steps": [], "batch_check": null}]'),
    _row('[{"kind": "content", "summary": "\\ud800", "steps": [], "batch_check": null}]'),  # lone surrogate
    _row(f'[{{"kind": "static_trace", "summary": "s", "steps": [{_STEP[:-1]}, "extra": 1}}], "batch_check": null}}]'),
    _row(f'[{{"kind": "batch_check", "summary": "s", "steps": [], "batch_check": {_CHECK.replace("2", "0")}}}]'),
    _row('[{"kind": "content", "summary": "s", "steps": [], "batch_check": null}'),  # truncated JSON
    _row('{}'),
    _row(notes='[1]'),
    _row(notes='["\\ud800"]'),
    _row(notes='not json'),
    _row(verdict="maybe"),
    _row(override=OverrideRow("clear", "   ", 5.0)),
    _row(override=OverrideRow("maybe", "why", 5.0)),
    _row(override=OverrideRow("flagged", "why", -1.0)),
    _row(override=OverrideRow("flagged", "why", float("nan"))),
])
def test_any_other_row_reads_as_it_did_through_pydantic(row: AuditRow) -> None:
    _same(row)


def test_canonical_rows_with_evidence_and_an_override_are_read_without_pydantic(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [_row(f'[{{"kind": "static_trace", "summary": "s", "steps": [{_STEP}], "batch_check": {_CHECK}}}]',
                 '["n\\u00e9"]', "flagged", OverrideRow("clear", "reviewed", 1733300000.123456), file="t.py"),
            _row(verdict="unanalysable", override=OverrideRow("flagged", "x", 1733300000.0))]
    wanted = [_same(r) for r in rows]
    assert wanted[0]["override"]["at"] == "2024-12-04T08:13:20.123456Z"
    assert wanted[1]["override"]["at"] == "2024-12-04T08:13:20Z"
    monkeypatch.setattr("orchestrator.compliance.store.from_row", lambda *a: pytest.fail("read via pydantic"))
    assert [audit_json("r", r) for r in rows] == wanted
