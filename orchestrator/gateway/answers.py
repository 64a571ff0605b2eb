"""What a model said in one transcript record (body or stream), without ids or timestamps: text, tool calls
with canonical arguments, stop reason, and the backend fingerprint where the API returns one. Read by
`sbx replay` (diverge/replay.py) and the judge grader (scoring/judge.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Answer:
    """What a model said in one response, without ids or timestamps."""

    text: str
    tools: tuple[tuple[str, str], ...]   # (tool name, canonical JSON arguments)
    stop_reason: str | None
    fingerprint: str | None = field(default=None, compare=False)

    def key(self) -> str:
        return json.dumps([self.text, self.tools, self.stop_reason])


def _canon_args(raw: Any) -> str:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return raw
    return json.dumps(raw, sort_keys=True, separators=(",", ":"))


def _loads(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _from_body(api: str, body: Any) -> Answer:
    if not isinstance(body, dict):
        return Answer("", (), None)
    if api == "anthropic":
        blocks = body.get("content") or []
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        tools = tuple((b.get("name", ""), _canon_args(b.get("input"))) for b in blocks if b.get("type") == "tool_use")
        return Answer(text, tools, body.get("stop_reason"))
    if api == "openai-chat":
        choice = (body.get("choices") or [{}])[0]
        msg = choice.get("message") or {}
        tools = tuple(((c.get("function") or {}).get("name", ""), _canon_args((c.get("function") or {}).get("arguments")))
                      for c in msg.get("tool_calls") or [])
        return Answer(msg.get("content") or "", tools, choice.get("finish_reason"), body.get("system_fingerprint"))
    items = body.get("output") or []
    text = "".join(c.get("text", "") for o in items if o.get("type") == "message" for c in o.get("content") or [])
    tools = tuple((o.get("name", ""), _canon_args(o.get("arguments"))) for o in items if o.get("type") == "function_call")
    return Answer(text, tools, body.get("status"))


def _from_events(api: str, events: list[list[Any]]) -> Answer:
    datas = [_loads(d) for _, d in events]
    if api == "openai-responses":
        done = [d["response"] for d in datas if isinstance(d, dict) and d.get("type", "").startswith("response.")
                and isinstance(d.get("response"), dict) and d["type"] != "response.created"]
        return _from_body(api, done[-1] if done else None)
    text, names, args, stop, fp = [], [], [], None, None
    for d in datas:
        if not isinstance(d, dict):
            continue
        if api == "anthropic":
            if d.get("type") == "content_block_start" and (d.get("content_block") or {}).get("type") == "tool_use":
                names.append(d["content_block"].get("name", ""))
                args.append("")
            delta = d.get("delta") or {}
            if delta.get("type") == "text_delta":
                text.append(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta" and args:
                args[-1] += delta.get("partial_json", "")
            if d.get("type") == "message_delta":
                stop = delta.get("stop_reason", stop)
        else:
            fp = d.get("system_fingerprint") or fp
            for choice in d.get("choices") or []:
                delta = choice.get("delta") or {}
                text.append(delta.get("content") or "")
                for c in delta.get("tool_calls") or []:
                    fn = c.get("function") or {}
                    if fn.get("name"):
                        names.append(fn["name"])
                        args.append("")
                    if args:
                        args[-1] += fn.get("arguments") or ""
                stop = choice.get("finish_reason") or stop
    return Answer("".join(text), tuple(zip(names, (_canon_args(a) for a in args))), stop, fp)


def answer_of(record: dict[str, Any]) -> Answer:
    """The answer a transcript record holds (body or stream)."""
    response = record.get("response") or {}
    if response.get("events") is not None:
        return _from_events(record["api"], response["events"])
    return _from_body(record["api"], _loads(response.get("body")))
