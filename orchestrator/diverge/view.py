"""One pair's two transcripts side by side, call by call, as bounded plain text for a report to render.

Per call and run: what the request added (the last message or input item: the prompt, a tool result)
and what the model answered (text, tool calls with their arguments, thinking), read as recorded. Every
text is cut at `MAX_TEXT` characters and at most `max_calls` calls are shown, around the first
divergence, so a hostile or huge transcript cannot blow up the report. Rendering (and escaping) is the
report's job (orchestrator/report/diverge_view.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from orchestrator.diverge.compare import PairComparison
from orchestrator.specs.transcript import CallRecord

MAX_TEXT = 2000
_TEXT_KEYS = ("text", "content", "output", "thinking", "refusal", "summary")


@dataclass(frozen=True)
class CallView:
    """One call of one run, as text."""

    speaker: str | None
    outcome: str
    status: int | None
    request: str
    response: str


@dataclass(frozen=True)
class PairRow:
    index: int
    a: CallView | None
    b: CallView | None
    #: None where one run made no call at this index
    request_equal: bool | None
    response_equal: bool | None
    first_divergence: bool


@dataclass(frozen=True)
class PairView:
    task: str
    repeat: int
    run_a: str
    run_b: str
    first_divergence: int | None
    divergence_class: str | None
    where: tuple[str, ...]
    calls_a: int
    calls_b: int
    #: the calls shown, in index order; `gaps` holds the indices after which calls were left out
    rows: tuple[PairRow, ...]
    gaps: tuple[int, ...]


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} more characters]"


def _json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _texts(node: Any, out: list[str], budget: list[int]) -> None:
    """Strings under text-like keys, in document order, until the budget is spent."""
    if budget[0] <= 0:
        return
    if isinstance(node, dict):
        kind = node.get("type")
        if isinstance(
            node.get("function"), dict
        ):  # a Chat Completions tool call: {type, function: {name, arguments}}
            node, kind = node["function"], "function"
        if kind in ("tool_use", "function_call", "function") and isinstance(node.get("name"), str):
            args = node.get("input", node.get("arguments"))
            shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False) if args else ""
            out.append(f"[tool {node['name']}] {shown}".rstrip())
            budget[0] -= len(out[-1])
            return
        for key, value in node.items():
            if key in _TEXT_KEYS and isinstance(value, str):
                out.append(value)
                budget[0] -= len(value)
            elif isinstance(value, (dict, list)):
                _texts(value, out, budget)
    elif isinstance(node, list):
        for item in node:
            _texts(item, out, budget)


def _joined(node: Any) -> str:
    out: list[str] = []
    _texts(node, out, [MAX_TEXT * 2])
    return _cut("\n".join(s for s in out if s))


def request_text(record: CallRecord) -> str:
    """What the request added: its last message or input item (the prompt, or the latest tool result)."""
    body = _json(record.request.body)
    if not isinstance(body, dict):
        return _cut(record.request.body or ("<binary body>" if record.request.body_b64 else ""))
    items = body.get("messages", body.get("input"))
    if isinstance(items, str):
        return _cut(items)
    if isinstance(items, list) and items:
        last = items[-1]
        role = (last.get("role") or last.get("type") or "") if isinstance(last, dict) else ""
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            return _cut(f"[function_call_output] {last.get('output', '')}")
        return f"[{role}] {_joined(last)}" if role else _joined(last)
    return _joined(body)


def _stream_text(record: CallRecord) -> str:
    """The answer of a streamed call, from its deltas (or a Responses stream's final response)."""
    events = record.response.events or []
    for _, data in reversed(events):  # Responses: the final response carries the whole output once
        parsed = _json(data)
        if (
            isinstance(parsed, dict)
            and isinstance(parsed.get("response"), dict)
            and parsed["response"].get("output")
        ):
            return _joined(parsed["response"]["output"])
    pieces: list[str] = []
    size = 0
    for _, data in events:
        parsed = _json(data)
        if not isinstance(parsed, dict):
            continue
        piece = ""
        if parsed.get("type") == "content_block_start":  # Anthropic: a tool call begins
            block = parsed.get("content_block") or {}
            if isinstance(block, dict) and block.get("type") == "tool_use":
                piece = f"[tool {block.get('name')}] "
        delta = parsed.get("delta")
        if isinstance(delta, dict):  # Anthropic text/thinking/arguments deltas
            piece += next(
                (v for k in ("text", "thinking", "partial_json") if isinstance(v := delta.get(k), str)), ""
            )
        elif isinstance(delta, str):  # Responses deltas
            piece += delta
        for choice in parsed.get("choices") or []:  # Chat Completions
            d = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(d, dict):
                continue
            if isinstance(d.get("content"), str):
                piece += d["content"]
            for call in d.get("tool_calls") or []:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict):
                    piece += (f"[tool {fn['name']}] " if isinstance(fn.get("name"), str) else "") + str(
                        fn.get("arguments") or ""
                    )
        pieces.append(piece)
        size += len(piece)
        if size > MAX_TEXT * 2:
            break
    return _cut("".join(pieces))


def response_text(record: CallRecord) -> str:
    """What the model answered: text, tool calls with arguments, thinking; the error when it failed."""
    if record.response.events is not None:
        text = _stream_text(record)
    else:
        body = _json(record.response.body)
        if isinstance(body, dict):
            content = body.get("content", body.get("output", body.get("choices")))
            text = _joined(content if content is not None else body)
        else:
            text = _cut(record.response.body or "")
    if record.error:
        text = f"{text}\n[error] {_cut(record.error, 500)}".strip()
    return text


def call_view(record: CallRecord) -> CallView:
    return CallView(
        record.speaker, record.outcome, record.response.status, request_text(record), response_text(record)
    )


def _shown(n: int, first: int | None, max_calls: int, context: int) -> list[int]:
    if n <= max_calls:
        return list(range(n))
    centre = first if first is not None else 0
    head = list(range(min(3, n)))
    lo = max(0, centre - (max_calls - len(head) - context - 1))
    window = range(lo, min(n, centre + context + 1))
    return sorted(set(head) | set(window))


def pair_view(
    task: str,
    repeat: int,
    run_a: str,
    run_b: str,
    a: Sequence[CallRecord],
    b: Sequence[CallRecord],
    comparison: PairComparison,
    *,
    max_calls: int = 40,
    context: int = 3,
) -> PairView:
    """The two runs' calls side by side, the first divergence marked (see the module docstring)."""
    calls_a = sorted(a, key=lambda r: r.index)
    calls_b = sorted(b, key=lambda r: r.index)
    n = max(len(calls_a), len(calls_b))
    shown = _shown(n, comparison.first_divergence, max_calls, context)
    diffs = {d.index: d for d in comparison.calls}
    rows = []
    for i in shown:
        d = diffs.get(i)
        rows.append(
            PairRow(
                index=i,
                a=call_view(calls_a[i]) if i < len(calls_a) else None,
                b=call_view(calls_b[i]) if i < len(calls_b) else None,
                request_equal=d.request_equal if d else None,
                response_equal=d.response_equal if d else None,
                first_divergence=i == comparison.first_divergence,
            )
        )
    gaps = tuple(x for x, y in pairwise(shown) if y != x + 1)
    if shown and shown[-1] < n - 1:
        gaps += (shown[-1],)
    return PairView(
        task=task,
        repeat=repeat,
        run_a=run_a,
        run_b=run_b,
        first_divergence=comparison.first_divergence,
        divergence_class=comparison.divergence_class.value if comparison.divergence_class else None,
        where=comparison.where,
        calls_a=len(calls_a),
        calls_b=len(calls_b),
        rows=tuple(rows),
        gaps=gaps,
    )
