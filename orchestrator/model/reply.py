"""What the stand-in answers to one request: the decision (which step, which variant, which tool) and its
usage, independent of the wire format it is sent in."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from orchestrator.model.conversation import MINI_SUBMIT, Conversation, Tool, tokens
from orchestrator.model.scenario import Scenario
from orchestrator.specs.usage import TokenUsage

#: the command mini-swe-agent finishes on (it stops only when a command's output starts with the marker)
MINI_FINISH_COMMAND = f"echo {MINI_SUBMIT}"
_LONG_MS = 600_000


@dataclass(frozen=True)
class Reply:
    kind: str                      # on the wire: "tool" (a tool call) | "text" (fenced command) | "finish" | "title"
    action: str                    # in the scenario: "shell" | "finish" | "title"
    text: str
    tool: str | None               # the advertised tool's name
    arguments: dict[str, Any] | None
    step: int | None               # None for a title call
    variant: int                   # -1: the step itself; k: the k-th variant
    draw: float                    # the seeded uniform draw that chose the variant
    usage: TokenUsage
    id_seed: str                   # source of the response's ids (deterministic)

    def ident(self, prefix: str, n: int = 24) -> str:
        return prefix + hashlib.sha256(f"{self.id_seed}:{prefix}".encode()).hexdigest()[:n]

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments or {}, separators=(",", ":"))


def shell_arguments(tool: Tool, command: str, step: int) -> dict[str, Any]:
    """Arguments for `tool` that run `command`, built from the tool's JSON schema."""
    props: dict[str, Any] = tool.schema.get("properties") or {}
    args: dict[str, Any] = {}
    key = next((k for k in ("command", "cmd", "script", "code", "input") if k in props), None)
    if key is None:
        required = [k for k in tool.schema.get("required") or [] if (props.get(k) or {}).get("type") == "string"]
        key = required[0] if required else "command"
    if (props.get(key) or {}).get("type") == "array":
        args[key] = ["bash", "-lc", command]
    else:
        args[key] = command
    if "description" in props:
        args["description"] = f"sbx stand-in step {step}"
    for name in ("timeout", "timeout_ms", "yield_time_ms"):
        spec = props.get(name)
        if isinstance(spec, dict) and spec.get("type") in ("integer", "number"):
            args[name] = int(min(_LONG_MS, spec.get("maximum", _LONG_MS)))
    return args


def decide(conv: Conversation, scenario: Scenario, seed: int) -> Reply:
    """The reply to `conv` in run `seed` of `scenario`."""
    id_seed = f"{seed}:{conv.api}:{conv.steps_done}:{conv.input_tokens}"
    if conv.is_title_request:
        return _with_usage(conv, kind="title", action="title", text=scenario.title, tool=None, arguments=None, step=None,
                           variant=-1, draw=0.0, id_seed=id_seed + ":title")
    step = conv.steps_done
    action, variant, draw = scenario.pick(seed, step, conv.prompt_text)
    command = action.shell
    text = action.say
    if action.finish is not None:
        text = action.finish
        if conv.is_mini:
            command = MINI_FINISH_COMMAND
    played = "shell" if action.shell is not None else "finish"
    if command is None:
        return _with_usage(conv, kind="finish", action=played, text=text, tool=None, arguments=None, step=step,
                           variant=variant, draw=draw, id_seed=id_seed)
    tool = conv.shell_tool()
    if tool is not None:
        return _with_usage(conv, kind="tool", action=played, text=text, tool=tool.name, arguments=shell_arguments(tool, command, step),
                           step=step, variant=variant, draw=draw, id_seed=id_seed)
    fence = conv.fence or "bash"
    thought = f"THOUGHT: {text or f'step {step}'}\n\n"
    return _with_usage(conv, kind="text", action=played, text=f"{thought}```{fence}\n{command}\n```", tool=None, arguments=None,
                       step=step, variant=variant, draw=draw, id_seed=id_seed)


def _with_usage(conv: Conversation, **fields: Any) -> Reply:
    visible = tokens([fields["text"], fields["tool"], fields["arguments"]])
    reasoning = (visible // 2 + 1) if conv.wants_reasoning else 0
    cached = min(conv.prefix_tokens, conv.input_tokens)
    cache_write = conv.input_tokens - cached if conv.wants_cache else 0
    usage = TokenUsage(input=conv.input_tokens, cached_input=cached, cache_write=cache_write,
                  output=visible + reasoning, reasoning=reasoning)
    return Reply(usage=usage, **fields)
