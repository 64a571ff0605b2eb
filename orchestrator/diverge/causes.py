"""Is a declared cause present at a pair's first divergence, and at its base-rate control call?"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.diverge.compare import PairComparison
from orchestrator.specs.diverge import Cause
from orchestrator.specs.transcript import CallRecord

_MISSING = object()


@dataclass(frozen=True)
class CauseSeen:
    """One pair's view of one cause; None where it could not be observed."""

    #: present at the first divergence (None: the pair never diverged, or one run made no call there)
    at_divergence: bool | None
    #: present at the control's call (None: no control declared, or a run made no call there)
    at_control: bool | None


def _first_value(node: Any, key: str) -> Any:
    """The value of the first `key` in document order, at any depth; _MISSING when absent."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        children: Iterable[Any] = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return _MISSING
    for child in children:
        found = _first_value(child, key)
        if found is not _MISSING:
            return found
    return _MISSING


def _json(text: str | None) -> Any:
    if text is None:
        return _MISSING
    try:
        return json.loads(text)
    except ValueError:
        return _MISSING


def _response_value(record: CallRecord, key: str) -> Any:
    if record.response.events is None:
        return _first_value(_json(record.response.body), key)
    for _, data in record.response.events:
        found = _first_value(_json(data), key)
        if found is not _MISSING:
            return found
    return _MISSING


def present(cause: Cause, a: CallRecord, b: CallRecord) -> bool:
    """Do the two runs' calls at one index differ in the way the cause names?"""
    key = cause.key or ""
    if cause.observe == "outcome_differs":
        return a.outcome != b.outcome
    if cause.observe == "response_value_differs":
        return _response_value(a, key) != _response_value(b, key)
    if cause.observe == "request_value_differs":
        return _first_value(_json(a.request.body), key) != _first_value(_json(b.request.body), key)
    if cause.observe == "response_header_differs":
        return a.response.headers.get(key) != b.response.headers.get(key)
    return a.request.headers.get(key) != b.request.headers.get(key)


def _at(cause: Cause, a: Sequence[CallRecord], b: Sequence[CallRecord], index: int | None) -> bool | None:
    if index is None or index >= len(a) or index >= len(b):
        return None
    return present(cause, a[index], b[index])


def observe_causes(
    a: Sequence[CallRecord], b: Sequence[CallRecord], comparison: PairComparison, causes: Sequence[Cause]
) -> dict[str, CauseSeen]:
    """For each cause: was it present at the pair's first divergence, and at its control call?

    Values are read from the calls as recorded (not normalised): a cause names a real difference,
    such as the provider's `system_fingerprint`.
    """
    calls_a = sorted(a, key=lambda r: r.index)
    calls_b = sorted(b, key=lambda r: r.index)
    return {
        cause.name: CauseSeen(
            at_divergence=_at(cause, calls_a, calls_b, comparison.first_divergence),
            at_control=_at(cause, calls_a, calls_b, cause.control.at_call if cause.control else None),
        )
        for cause in causes
    }
