"""Two runs of one task compared call by call: identical or not, where they first differ, and how."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from orchestrator.diverge.normalise import DEFAULT, OPAQUE_KEYS, CanonicalCall, Normalisation, canonical_calls
from orchestrator.diverge.reader import Transcript
from orchestrator.specs.transcript import CallRecord

#: differing locations kept per pair (for the report); `opaque_only` looks at up to _SCAN of them
MAX_WHERE = 5
_SCAN = 50
_ORDINAL = re.compile(r"<([^<>#\"]+)#\d+>")


class DivergenceClass(StrEnum):
    """How a pair's first divergence came about."""

    #: the request was identical and the response differed (the model or provider answered differently)
    RESPONSE = "response"
    #: the request differed although every earlier response was identical: a tool result or the
    #: environment differed (at call 0: the starting request itself)
    REQUEST = "request"
    #: the calls at this index came from different speakers, or the same calls arrived in another order
    CALL_ORDER = "call_order"
    #: identical to the end of the shorter run; the other run made more calls
    CALL_COUNT = "call_count"


@dataclass(frozen=True)
class CallDiff:
    """One call index of a pair; an equality is None where one run made no call at that index."""

    index: int
    request_equal: bool | None
    response_equal: bool | None
    speaker_a: str | None
    speaker_b: str | None


@dataclass(frozen=True)
class PairComparison:
    """Runs A and B of one pair, compared call by call after normalisation."""

    calls_a: int
    calls_b: int
    first_divergence: int | None
    divergence_class: DivergenceClass | None
    #: who made the call at the first divergence in each run (None where the gateway had no speaker)
    speaker_a: str | None
    speaker_b: str | None
    #: the first differing locations at the first divergence, e.g. "response.events[3][1].delta.text"
    where: tuple[str, ...]
    #: every differing location at the first divergence is an opaque blob (signature, encrypted reasoning)
    opaque_only: bool
    calls: tuple[CallDiff, ...]
    normalisation: Normalisation

    @property
    def identical(self) -> bool:
        return self.first_divergence is None

    @property
    def compared(self) -> int:
        """Call indices at which at least one run made a call (the pair's horizon for the hazard)."""
        return max(self.calls_a, self.calls_b)


def differences(a: Any, b: Any, path: str = "", limit: int = _SCAN) -> list[str]:
    """Where two JSON-like values differ: up to `limit` locations, in document order."""
    out: list[str] = []

    def visit(x: Any, y: Any, at: str) -> None:
        if len(out) >= limit or x == y:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in list(x) + [k for k in y if k not in x]:
                if key not in x or key not in y:
                    out.append(f"{at}.{key}")
                else:
                    visit(x[key], y[key], f"{at}.{key}")
                if len(out) >= limit:
                    return
        elif isinstance(x, list) and isinstance(y, list):
            for i in range(max(len(x), len(y))):
                if i >= len(x) or i >= len(y):
                    out.append(f"{at}[{i}]")
                else:
                    visit(x[i], y[i], f"{at}[{i}]")
                if len(out) >= limit:
                    return
        else:
            out.append(at)

    visit(a, b, path)
    return out


def _order_key(request: dict[str, Any]) -> str:
    """The request with placeholder ordinals erased: the same call, whichever position it came in."""
    return _ORDINAL.sub(r"<\1>", json.dumps(request, sort_keys=True))


def _swapped(ca: list[CanonicalCall], cb: list[CanonicalCall], i: int) -> bool:
    later_b = {_order_key(c.request) for c in cb[i + 1 :]}
    later_a = {_order_key(c.request) for c in ca[i + 1 :]}
    return _order_key(ca[i].request) in later_b and _order_key(cb[i].request) in later_a


def compare_canonical(
    ca: list[CanonicalCall], cb: list[CanonicalCall], normalisation: Normalisation = DEFAULT
) -> PairComparison:
    """Where do two runs' (already normalised) calls first differ, and which kind of difference is it?"""
    diffs: list[CallDiff] = []
    first: int | None = None
    kind: DivergenceClass | None = None
    where: list[str] = []
    for i in range(max(len(ca), len(cb))):
        a = ca[i] if i < len(ca) else None
        b = cb[i] if i < len(cb) else None
        if a is None or b is None:
            diffs.append(CallDiff(i, None, None, a.speaker if a else None, b.speaker if b else None))
            if first is None:
                first, kind = i, DivergenceClass.CALL_COUNT
            continue
        req_eq = a.request == b.request
        resp_eq = a.response == b.response
        diffs.append(CallDiff(i, req_eq, resp_eq, a.speaker, b.speaker))
        if first is not None or (req_eq and resp_eq and a.speaker == b.speaker):
            continue
        first = i
        if a.speaker != b.speaker or (not req_eq and _swapped(ca, cb, i)):
            kind = DivergenceClass.CALL_ORDER
        elif not req_eq:
            kind = DivergenceClass.REQUEST
        else:
            kind = DivergenceClass.RESPONSE
        where = differences(a.request, b.request, "request") if not req_eq else []
        where += differences(a.response, b.response, "response", _SCAN - len(where)) if not resp_eq else []
    speaker_a = speaker_b = None
    if first is not None:
        speaker_a = ca[first].speaker if first < len(ca) else None
        speaker_b = cb[first].speaker if first < len(cb) else None
    opaque_only = bool(where) and len(where) < _SCAN and all(_is_opaque(w) for w in where)
    return PairComparison(
        calls_a=len(ca),
        calls_b=len(cb),
        first_divergence=first,
        divergence_class=kind,
        speaker_a=speaker_a,
        speaker_b=speaker_b,
        where=tuple(where[:MAX_WHERE]),
        opaque_only=opaque_only,
        calls=tuple(diffs),
        normalisation=normalisation,
    )


def _is_opaque(location: str) -> bool:
    return location.rsplit(".", 1)[-1] in OPAQUE_KEYS


def _records(run: Transcript | Sequence[CallRecord]) -> Sequence[CallRecord]:
    return run.calls if isinstance(run, Transcript) else run


def compare_runs(
    a: Transcript | Sequence[CallRecord],
    b: Transcript | Sequence[CallRecord],
    normalisation: Normalisation = DEFAULT,
) -> PairComparison:
    """Do two runs of one task make the same calls and get the same answers, and if not, where first?

    Calls are aligned by index. Each run's random identifiers are mapped to ordinal placeholders in
    order of first appearance within that run (`normalise`), so two runs that said the same things
    compare equal. The first index where the speaker, the request or the response differs is the first
    divergence; its class says whether the model answered an identical request differently
    (RESPONSE), the agent sent a different request after identical answers (REQUEST: a tool result
    or the environment differed), the calls came in another order or from another speaker
    (CALL_ORDER), or one run simply made more calls (CALL_COUNT).
    """
    return compare_canonical(
        canonical_calls(list(_records(a)), normalisation),
        canonical_calls(list(_records(b)), normalisation),
        normalisation,
    )
