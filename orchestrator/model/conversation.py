"""What a stand-in needs to know about one request, read the same way for the three wire APIs.

The stand-in is stateless: the step to play is the number of tool calls the model already made in the
conversation the request carries (or, when no tool is advertised, the number of assistant turns). Usage is
derived from the request too, so the same request always reports the same tokens:

- tokens(x) = ceil(len(canonical JSON of x in UTF-8) / 4), summed over the prompt's parts (system or
  instructions, the tool list, then each message or input item);
- cached input = the parts before the last assistant turn: in an append-only conversation exactly the
  input of the previous call (0 on a first call);
- cache write (Anthropic only, when the body asks for caching with `cache_control`) = the rest of the input.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal

Api = Literal["anthropic", "openai-chat", "openai-responses"]

MINI_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
_TITLE = re.compile(r"title generat|generate (?:a|the) (?:short |brief )?title", re.IGNORECASE)
_FENCE = re.compile(r"```([A-Za-z0-9_\-]+)")
_TOOL_CALL_ITEMS = {"function_call", "custom_tool_call", "local_shell_call"}
_ASSISTANT_ITEMS = _TOOL_CALL_ITEMS | {"reasoning"}


def canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tokens(obj: Any) -> int:
    """The stand-in's token count of one prompt part: a quarter of its canonical JSON's UTF-8 bytes."""
    if obj is None:
        return 0
    return math.ceil(len(canonical(obj).encode()) / 4)


@dataclass(frozen=True)
class Tool:
    name: str
    schema: dict[str, Any]


@dataclass
class Conversation:
    api: Api
    model: str
    stream: bool
    tools: list[Tool]
    system_text: str
    prompt_text: str          # all text the request carries, for markers (mini-swe-agent, fences)
    tool_calls_made: int
    assistant_turns: int
    input_tokens: int         # every input token, cached ones included
    prefix_tokens: int        # the part a previous call of this conversation already sent
    wants_cache: bool
    wants_reasoning: bool
    include_usage: bool = True  # Chat streams report usage only when asked (stream_options.include_usage)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def steps_done(self) -> int:
        return self.tool_calls_made if self.tools else self.assistant_turns

    @property
    def is_title_request(self) -> bool:
        return not self.tools and bool(_TITLE.search(self.system_text))

    @property
    def is_mini(self) -> bool:
        return MINI_SUBMIT in self.prompt_text

    @property
    def fence(self) -> str | None:
        """The info string of the fenced block the prompt asks commands in (mini-swe-agent's text mode)."""
        names = _FENCE.findall(self.system_text) or _FENCE.findall(self.prompt_text)
        if "mswea_bash_command" in names:
            return "mswea_bash_command"
        return names[0] if names else None

    def shell_tool(self) -> Tool | None:
        by_name = {t.name: t for t in self.tools}
        for name in ("Bash", "bash", "shell", "shell_command", "exec_command", "local_shell"):
            if name in by_name:
                return by_name[name]
        return None


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c) for c in content)
    if isinstance(content, dict):
        for key in ("text", "content", "output"):
            if key in content:
                return _text_of(content[key])
    return ""


def _usage_split(parts: list[Any], prefix_len: int) -> tuple[int, int]:
    counts = [tokens(p) for p in parts]
    return sum(counts), sum(counts[:prefix_len])


def read(api: Api, body: dict[str, Any]) -> Conversation:
    """Read a request body of `api` (already parsed JSON)."""
    return {"anthropic": _anthropic, "openai-chat": _chat, "openai-responses": _responses}[api](body)


def _anthropic(body: dict[str, Any]) -> Conversation:
    system = body.get("system")
    tools = [Tool(t["name"], t.get("input_schema") or {}) for t in body.get("tools") or []
             if isinstance(t, dict) and "name" in t]
    messages = body.get("messages") or []
    calls = turns = 0
    last_assistant = -1
    for i, m in enumerate(messages):
        if m.get("role") == "assistant":
            turns += 1
            last_assistant = i
            content = m.get("content")
            if isinstance(content, list):
                calls += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_use")
    parts = [system, body.get("tools")] + list(messages)
    total, prefix = _usage_split(parts, last_assistant + 2 if last_assistant >= 0 else 0)
    thinking = body.get("thinking")
    return Conversation(
        api="anthropic", model=str(body.get("model", "")), stream=bool(body.get("stream")), tools=tools,
        system_text=_text_of(system), prompt_text=_text_of(system) + "\n" + _text_of([m.get("content") for m in messages]),
        tool_calls_made=calls, assistant_turns=turns, input_tokens=total, prefix_tokens=prefix,
        wants_cache="cache_control" in canonical(body),
        wants_reasoning=isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"),
    )


def _chat(body: dict[str, Any]) -> Conversation:
    messages = body.get("messages") or []
    tools = [Tool(t["function"]["name"], t["function"].get("parameters") or {}) for t in body.get("tools") or []
             if isinstance(t, dict) and isinstance(t.get("function"), dict) and "name" in t["function"]]
    calls = turns = 0
    last_assistant = -1
    system = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role in ("system", "developer"):
            system.append(_text_of(m.get("content")))
        if role == "assistant":
            turns += 1
            last_assistant = i
            calls += len(m.get("tool_calls") or [])
    parts = [body.get("tools")] + list(messages)
    total, prefix = _usage_split(parts, last_assistant + 1 if last_assistant >= 0 else 0)
    options = body.get("stream_options") or {}
    return Conversation(
        api="openai-chat", model=str(body.get("model", "")), stream=bool(body.get("stream")), tools=tools,
        system_text="\n".join(system), prompt_text=_text_of([m.get("content") for m in messages]),
        tool_calls_made=calls, assistant_turns=turns, input_tokens=total, prefix_tokens=prefix,
        wants_cache=False, wants_reasoning=body.get("reasoning_effort") not in (None, "none"),
        include_usage=bool(options.get("include_usage")),
    )


def _responses(body: dict[str, Any]) -> Conversation:
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    tools = [Tool(t["name"], t.get("parameters") or {}) for t in body.get("tools") or []
             if isinstance(t, dict) and t.get("type") == "function" and "name" in t]
    calls = turns = 0
    last_assistant = -1
    system = [_text_of(body.get("instructions"))]
    previous_assistant = False
    for i, item in enumerate(items):
        kind = item.get("type", "message")
        role = item.get("role")
        if kind == "message" and role in ("system", "developer"):
            system.append(_text_of(item.get("content")))
        assistant = kind in _ASSISTANT_ITEMS or (kind == "message" and role == "assistant")
        if assistant and not previous_assistant:
            last_assistant = i  # the first item of this assistant turn
            turns += 1
        if kind in _TOOL_CALL_ITEMS:
            calls += 1
        previous_assistant = assistant
    parts = [body.get("instructions"), body.get("tools")] + list(items)
    total, prefix = _usage_split(parts, last_assistant + 2 if last_assistant >= 0 else 0)
    reasoning = body.get("reasoning")
    return Conversation(
        api="openai-responses", model=str(body.get("model", "")), stream=bool(body.get("stream")), tools=tools,
        system_text="\n".join(system), prompt_text="\n".join(system) + "\n" + _text_of([i.get("content", i.get("output")) for i in items]),
        tool_calls_made=calls, assistant_turns=turns, input_tokens=total, prefix_tokens=prefix,
        wants_cache=False, wants_reasoning=isinstance(reasoning, dict) and reasoning.get("effort") not in (None, "none"),
    )
