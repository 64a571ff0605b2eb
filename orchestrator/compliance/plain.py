"""Audit rows read back as plain JSON data, without pydantic: what `sbx show` prints of a run's audits.

`sbx show RUN` prints each audit record as `AuditRecord.model_dump(mode="json")`, and importing pydantic
and building the record models for that was most of the command's start-up (issue 23: every command that
reads the ledger starts within 0.5 s). The write path is unchanged: compliance/store.py validates every
record through the models in compliance/records.py and writes their JSON, which is canonical (every field,
in the models' order, of the models' types). `audit_json` reads that form straight into the dict the model
would dump, checking each value against the models' constraints as it goes. A row in any other form (written
by hand or by an older version, with a default left out, an int where a float belongs, or invalid) goes
through pydantic as before, so every row shows, or is refused, exactly as it was.

The verdicts' and evidence kinds' Literal types live here, so that records.py and this module share one
list; tests/compliance/test_plain.py holds the field lists below to the models' fields.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, get_args

if TYPE_CHECKING:
    from orchestrator.ledger import AuditRow

Verdict = Literal["flagged", "clear", "unanalysable", "error"]
OverrideVerdict = Literal["flagged", "clear"]
EvidenceKind = Literal["static_trace", "batch_check", "parse_error", "incomplete", "content", "unanalysable"]

_VERDICTS: frozenset[str] = frozenset(get_args(Verdict))
_OVERRIDE_VERDICTS: frozenset[str] = frozenset(get_args(OverrideVerdict))
_KINDS: frozenset[str] = frozenset(get_args(EvidenceKind))
#: the models' fields in their order (records.py: Evidence, EvidenceStep, BatchCheck)
EVIDENCE_FIELDS = ("kind", "summary", "steps", "batch_check")
STEP_FIELDS = ("file", "line", "code", "names", "note", "scope")
CHECK_FIELDS = ("rows_checked", "rows_changed", "max_abs_change", "tolerance")
#: ints past this are left to pydantic (the canonical form never has them)
_INT_LIMIT = 1 << 63


class _NotCanonical(Exception):
    """The row is not in the form the write path writes: pydantic decides what it is."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads keeps the last of a repeated key; the canonical form repeats none."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _NotCanonical
    return out


def _loads(text: object) -> Any:
    if type(text) is not str:
        raise _NotCanonical
    try:
        return json.loads(text, object_pairs_hook=_object)
    except ValueError:  # JSONDecodeError, or a number too long to convert
        raise _NotCanonical from None


def _text(value: object) -> str:
    if type(value) is not str:
        raise _NotCanonical
    if not value.isascii():
        try:  # a lone surrogate (a "\ud800" escape): json.loads reads it, pydantic's JSON parser refuses it
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _NotCanonical from None
    return value


def _count(value: object) -> int:
    if type(value) is not int or not 0 <= value < _INT_LIMIT:
        raise _NotCanonical
    return value


def _real(value: object) -> float:
    if type(value) is not float or not math.isfinite(value) or not value >= 0:
        raise _NotCanonical
    return value


def _fields(value: object, names: tuple[str, ...]) -> dict[str, Any]:
    if type(value) is not dict or len(value) != len(names) or not all(n in value for n in names):
        raise _NotCanonical
    return value


def _texts(value: object) -> list[str]:
    if type(value) is not list:
        raise _NotCanonical
    return [_text(v) for v in value]


def _step(value: object) -> dict[str, Any]:
    s = _fields(value, STEP_FIELDS)
    return {"file": _text(s["file"]), "line": _count(s["line"]), "code": _text(s["code"]),
            "names": _texts(s["names"]), "note": _text(s["note"]), "scope": _text(s["scope"])}


def _check(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    c = _fields(value, CHECK_FIELDS)
    checked, changed = _count(c["rows_checked"]), _count(c["rows_changed"])
    if changed > checked:
        raise _NotCanonical
    return {"rows_checked": checked, "rows_changed": changed, "max_abs_change": _real(c["max_abs_change"]),
            "tolerance": _real(c["tolerance"])}


def _evidence(value: object) -> dict[str, Any]:
    e = _fields(value, EVIDENCE_FIELDS)
    kind = _text(e["kind"])
    if kind not in _KINDS or type(e["steps"]) is not list:
        raise _NotCanonical
    return {"kind": kind, "summary": _text(e["summary"]), "steps": [_step(s) for s in e["steps"]],
            "batch_check": _check(e["batch_check"])}


def _at(created_at: object) -> str:
    """The override's time as pydantic dumps a UTC datetime: ISO 8601 with a Z."""
    if isinstance(created_at, bool) or not isinstance(created_at, int | float) \
            or not 0 <= created_at < 253402300800:  # 1970 to 9999
        raise _NotCanonical
    return datetime.fromtimestamp(created_at, UTC).isoformat().removesuffix("+00:00") + "Z"


def _canonical(row: AuditRow) -> dict[str, Any]:
    verdict = _text(row.verdict)
    if verdict not in _VERDICTS:
        raise _NotCanonical
    evidence = _loads(row.evidence_json)
    if type(evidence) is not list:
        raise _NotCanonical
    override = None
    if row.override is not None:
        o = row.override
        if _text(o.verdict) not in _OVERRIDE_VERDICTS or not _text(o.reason).strip():
            raise _NotCanonical
        override = {"verdict": o.verdict, "reason": o.reason, "at": _at(o.created_at)}
    return {"file": None if row.file is None else _text(row.file), "rule": _text(row.rule),
            "rule_version": _text(row.rule_version), "verdict": verdict,
            "evidence": [_evidence(e) for e in evidence], "notes": _texts(_loads(row.notes_json)),
            "override": override, "final_verdict": override["verdict"] if override else verdict}


def audit_json(run_id: str, row: AuditRow) -> dict[str, Any]:
    """One audit row of `run_id` as `AuditRecord.model_dump(mode="json", exclude={"run_id"})` with its
    `final_verdict`: read directly when the row is in the write path's canonical form, else through pydantic
    (which raises for an invalid row, as it always has)."""
    try:
        return _canonical(row)
    except _NotCanonical:
        pass
    from orchestrator.compliance.store import from_row

    record = from_row(run_id, row)
    return record.model_dump(mode="json", exclude={"run_id"}) | {"final_verdict": record.final_verdict}
