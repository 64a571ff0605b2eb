"""A run's model calls for people: what each call sent and received, its timings, tokens and cost.

`sbx transcript RUN` prints one line per call; `--html FILE` writes a self-contained page (no scripts) with
each call's new messages (the conversation a call carries repeats the earlier ones), the model's answer
(text, reasoning, tool calls) assembled from the body or the stream's events, and the numbers. The
transcript is read with the strict reader (orchestrator/diverge/reader.py); everything shown is the agent's
or the provider's text, so every string is cut to a bound and the page is rendered from
templates/transcript.html.j2 with escaping by default (orchestrator/report/templating.py).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from orchestrator.report.templating import render_page
from orchestrator.specs.transcript import CallRecord

#: characters of one part kept on the page / in a summary line
PAGE_CHARS = 20_000
LINE_CHARS = 90


@dataclass(frozen=True)
class Part:
    role: str             # system | user | assistant | tool | tools
    kind: str             # text | reasoning | tool_call | tool_result | tools
    text: str
    name: str | None = None


@dataclass
class CallView:
    index: int
    path: str
    status: int | None
    outcome: str
    stream: bool
    started_at: float
    ttfb_s: float | None
    total_s: float | None
    usage: dict[str, int] | None
    cost_usd: float | None
    error: str | None
    model: str | None
    sent: list[Part] = field(default_factory=list)
    received: list[Part] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def says(self) -> str:
        """One line on what the model answered."""
        calls = [p for p in self.received if p.kind == "tool_call"]
        if calls:
            return "; ".join(f"{p.name}: {_one_line(p.text)}" for p in calls)
        texts = [p.text for p in self.received if p.kind == "text" and p.text.strip()]
        if texts:
            return _one_line(" ".join(texts))
        return self.error or ""


# --- reading requests -----------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    """Plain text of a message's content in any of the three APIs' shapes."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for block in content:
            if isinstance(block, str):
                out.append(block)
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    out.append(block["text"])
                elif "content" in block:
                    out.append(_text_of(block["content"]))
        return "\n".join(out)
    return "" if content is None else json.dumps(content)[:PAGE_CHARS]


def _args(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _anthropic_message(msg: dict[str, Any]) -> list[Part]:
    role, content = str(msg.get("role", "?")), msg.get("content")
    if not isinstance(content, list):
        return [Part(role, "text", _text_of(content))]
    parts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_use":
            parts.append(Part(role, "tool_call", _args(block.get("input")), str(block.get("name"))))
        elif kind == "tool_result":
            parts.append(Part("tool", "tool_result", _text_of(block.get("content"))))
        elif kind == "thinking":
            parts.append(Part(role, "reasoning", str(block.get("thinking", ""))))
        elif kind == "text":
            parts.append(Part(role, "text", str(block.get("text", ""))))
    return parts


def _chat_message(msg: dict[str, Any]) -> list[Part]:
    role = str(msg.get("role", "?"))
    if role == "tool":
        return [Part("tool", "tool_result", _text_of(msg.get("content")))]
    parts = []
    text = _text_of(msg.get("content"))
    if text:
        parts.append(Part(role, "text", text))
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        parts.append(Part(role, "tool_call", _args(fn.get("arguments")), str(fn.get("name"))))
    return parts


def _responses_item(item: Any) -> list[Part]:
    if isinstance(item, str):
        return [Part("user", "text", item)]
    if not isinstance(item, dict):
        return []
    kind = item.get("type", "message")
    if kind == "message":
        return [Part(str(item.get("role", "?")), "text", _text_of(item.get("content")))]
    if kind in ("function_call", "custom_tool_call"):
        return [Part("assistant", "tool_call", _args(item.get("arguments", item.get("input"))), str(item.get("name")))]
    if kind == "local_shell_call":
        return [Part("assistant", "tool_call", _args(item.get("action")), "local_shell")]
    if kind.endswith("_output"):
        return [Part("tool", "tool_result", _text_of(item.get("output")))]
    if kind == "reasoning":
        return [Part("assistant", "reasoning", _text_of(item.get("summary")))]
    return []


def request_parts(api: str, body: dict[str, Any]) -> tuple[list[Part], list[Part], str | None]:
    """(preamble: system prompt and tools, messages, model) of a request body."""
    pre: list[Part] = []
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        names = [str(t.get("name") or t.get("function", {}).get("name") or t.get("type"))
                 for t in tools if isinstance(t, dict)]
        pre.append(Part("tools", "tools", ", ".join(names)))
    model = body.get("model") if isinstance(body.get("model"), str) else None
    if api == "anthropic":
        if body.get("system"):
            pre.insert(0, Part("system", "text", _text_of(body["system"])))
        messages = [p for m in body.get("messages") or [] if isinstance(m, dict) for p in _anthropic_message(m)]
    elif api == "openai-chat":
        listed = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system = [m for m in listed if m.get("role") in ("system", "developer")]
        pre[:0] = [Part("system", "text", _text_of(m.get("content"))) for m in system]
        messages = [p for m in listed if m not in system for p in _chat_message(m)]
    else:
        if body.get("instructions"):
            pre.insert(0, Part("system", "text", _text_of(body["instructions"])))
        items = body.get("input")
        messages = [p for it in (items if isinstance(items, list) else [items]) for p in _responses_item(it)]
    return pre, messages, model


# --- reading responses ----------------------------------------------------------------------------------


def _loads(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _anthropic_stream(events: Iterable[tuple[str | None, str]]) -> list[Part]:
    blocks: dict[int, dict[str, Any]] = {}
    for _name, data in events:
        ev = _loads(data)
        if not isinstance(ev, dict):
            continue
        raw_index = ev.get("index")
        idx: int = raw_index if isinstance(raw_index, int) else -1
        if ev.get("type") == "content_block_start" and isinstance(ev.get("content_block"), dict):
            cb = ev["content_block"]
            blocks[idx] = {"type": cb.get("type"), "name": cb.get("name"), "text": str(cb.get("text") or "")}
        elif ev.get("type") == "content_block_delta" and isinstance(ev.get("delta"), dict):
            d, b = ev["delta"], blocks.setdefault(idx, {"type": "text", "name": None, "text": ""})
            b["text"] += str(d.get("text") or d.get("partial_json") or d.get("thinking") or "")
    parts = []
    for _, b in sorted(blocks.items()):
        kind = {"tool_use": "tool_call", "thinking": "reasoning"}.get(str(b["type"]), "text")
        parts.append(Part("assistant", kind, b["text"], b["name"]))
    return parts


def _chat_stream(events: Iterable[tuple[str | None, str]]) -> list[Part]:
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for _name, data in events:
        chunk = _loads(data)
        if not isinstance(chunk, dict):
            continue
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                # the index is the model's: anything but an int is call 0 (mixed keys would not sort)
                index = call.get("index", 0)
                c = calls.setdefault(index if isinstance(index, int) else 0, {"name": None, "args": ""})
                fn = call.get("function") or {}
                c["name"] = c["name"] or fn.get("name")
                c["args"] += str(fn.get("arguments") or "")
    parts = [Part("assistant", "text", "".join(text))] if "".join(text) else []
    return parts + [Part("assistant", "tool_call", c["args"], str(c["name"])) for _, c in sorted(calls.items())]


def response_parts(api: str, body: str | None, events: list[tuple[str | None, str]] | None) -> list[Part]:
    """What the model answered: text, reasoning and tool calls, from the body or the stream's events."""
    if events is not None:
        if api == "anthropic":
            return _anthropic_stream(events)
        if api == "openai-chat":
            return _chat_stream(events)
        for _name, data in events:  # Responses: the final event holds the whole output
            ev = _loads(data)
            if isinstance(ev, dict) and ev.get("type") in ("response.completed", "response.incomplete"):
                return response_parts(api, json.dumps(ev.get("response")), None)
        return []
    doc = _loads(body)
    if not isinstance(doc, dict):
        return [Part("assistant", "text", body)] if body else []
    if api == "anthropic":
        return _anthropic_message({"role": "assistant", "content": doc.get("content")})
    if api == "openai-chat":
        choices = doc.get("choices") or [{}]
        msg = choices[0].get("message") if isinstance(choices[0], dict) else None
        return _chat_message({**msg, "role": "assistant"}) if isinstance(msg, dict) else []
    return [p for item in doc.get("output") or [] for p in _responses_item(item)]


# --- calls ------------------------------------------------------------------------------------------------


def call_views(calls: Iterable[CallRecord]) -> list[CallView]:
    """Each call with the messages new since the previous call's request, and what came back."""
    views: list[CallView] = []
    seen = 0
    for c in calls:
        body = _loads(c.request.body)
        pre, messages, model = request_parts(c.api, body) if isinstance(body, dict) else ([], [], None)
        new = messages[seen:] if len(messages) >= seen else messages
        sent = (pre if c.index == 0 or not views else []) + new
        seen = len(messages)
        views.append(CallView(
            index=c.index, path=c.path, status=c.response.status, outcome=c.outcome, stream=c.stream,
            started_at=c.started_at, ttfb_s=c.ttfb_s, total_s=c.total_s,
            usage=c.usage.model_dump() if c.usage else None, cost_usd=c.cost_usd, error=c.error, model=model,
            sent=sent, received=response_parts(c.api, c.response.body, c.response.events),
        ))
    return views


def _one_line(text: str) -> str:
    """One line for a terminal: whitespace collapsed, control characters (escape sequences) shown as \\xNN."""
    flat = " ".join(text.split())
    flat = flat if len(flat) <= LINE_CHARS else flat[: LINE_CHARS - 3] + "..."
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in flat)


def _n(v: float | None, fmt: str) -> str:
    return "-" if v is None else format(v, fmt)


def text_lines(views: list[CallView]) -> list[str]:
    """One line per call: index, path, status, outcome, time to first byte and total (s), tokens, cost."""
    out = [(f"{'#':>3}  {'status':>6} {'outcome':<16} {'ttfb':>6} {'total':>7} {'input':>8} {'cached':>8} "
            f"{'output':>7} {'reason':>6} {'cost $':>9}  says")]
    for v in views:
        u = v.usage or {}
        out.append(f"{v.index:>3}  {_n(v.status, 'd'):>6} {v.outcome:<16} {_n(v.ttfb_s, '.3f'):>6} "
                   f"{_n(v.total_s, '.3f'):>7} {u.get('input', '-'):>8} {u.get('cached_input', '-'):>8} "
                   f"{u.get('output', '-'):>7} {u.get('reasoning', '-'):>6} {_n(v.cost_usd, '.6f'):>9}  {v.says()}")
    return out


# --- the page (templates/transcript.html.j2) ---------------------------------------------------------------

#: a part longer than this is folded into <details>, its first line as the summary
FOLD_CHARS = 1500


def _part(p: Part) -> dict[str, Any]:
    text = p.text if len(p.text) <= PAGE_CHARS else p.text[:PAGE_CHARS] + f"\n[... {len(p.text) - PAGE_CHARS} more characters]"
    who = {"tool_call": f"{p.role}: tool call {p.name}", "tool_result": "tool result",
           "reasoning": f"{p.role}: reasoning", "tools": "tools offered"}.get(p.kind, p.role)
    return {"role": p.role, "who": who, "text": text, "fold": _one_line(text) if len(text) > FOLD_CHARS else None}


def _call(v: CallView) -> dict[str, Any]:
    u = v.usage or {}
    return {
        "index": v.index, "path": v.path, "outcome": v.outcome, "stream": v.stream, "error": v.error,
        "row": (f"#{v.index}", _n(v.status, "d"), v.outcome, _n(v.ttfb_s, ".3f"), _n(v.total_s, ".3f"),
                u.get("input", "-"), u.get("cached_input", "-"), u.get("output", "-"), u.get("reasoning", "-"),
                _n(v.cost_usd, ".6f")),
        "when": dt.datetime.fromtimestamp(v.started_at, dt.UTC).strftime("%H:%M:%S.%f")[:-3],
        "cls": "" if v.outcome == "ok" else " bad", "status": _n(v.status, "d"), "model": v.model or "-",
        "ttfb": _n(v.ttfb_s, ".3f"), "total": _n(v.total_s, ".3f"), "cost": _n(v.cost_usd, ".6f"),
        "tokens": json.dumps(v.usage) if v.usage else "-",
        "sent": [_part(p) for p in v.sent], "received": [_part(p) for p in v.received],
    }


def page_calls(views: list[CallView]) -> list[dict[str, Any]]:
    """The calls as templates/transcript_calls.html.j2 shows them (this page and `sbx view`'s run page)."""
    return [_call(v) for v in views]


def html_page(views: list[CallView], *, title: str, summary: dict[str, Any]) -> str:
    """A self-contained page: the run's numbers, a table of calls, then each call in full."""
    return render_page("transcript.html.j2", title=title, summary=[(str(k), str(v)) for k, v in summary.items()],
                       calls=page_calls(views))


__all__ = ["CallView", "Part", "call_views", "html_page", "page_calls", "request_parts", "response_parts",
           "text_lines"]
