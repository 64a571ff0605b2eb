"""What the gateway decides about a call before forwarding it, on exactly what the upstream will read.

Three decisions, each made once per call:

- **the request target**: the path and query as the agent sent them (the raw bytes of the request line, never
  a decoded or normalised form) must be one of the API's targets, character for character; that same string
  is what is forwarded, so the path the policy decides on is the path the upstream gets. Anything else (a
  percent-encoded character, a `.`/`..` segment, `//`, a query the API does not take, a fragment, an
  absolute-form target) is refused, never forwarded with the key.
- **the body**: one strict JSON parse (UTF-8 only, an object at the top, no duplicate keys, no NaN or
  Infinity, no key holding a lone surrogate); a body that parsers could read two ways, or that is not JSON, is
  refused. The metering rules below read that parsed object, never the bytes.
- **metering**: a call whose usage the gateway could not see, or whose price is not in tokens, is refused
  (`METERING_RULES` below says which); a forwarded call's worst case (`worst_case`) is reserved against the
  run's token and cost limits until its usage is known.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeGuard

from orchestrator.gateway.limits import Refusal

#: request targets a run may call, per API, exactly as they must appear on the request line. Anthropic's SDK
#: (Claude Code) adds `?beta=true`; the OpenAI APIs take no query.
TARGETS: dict[str, frozenset[str]] = {
    "anthropic": frozenset({"/v1/messages", "/v1/messages?beta=true", "/v1/messages/count_tokens",
                            "/v1/messages/count_tokens?beta=true"}),
    "openai-chat": frozenset({"/v1/chat/completions"}),
    "openai-responses": frozenset({"/v1/responses"}),
}
#: targets whose answer carries no usage because nothing is billed (token counting)
FREE_TARGETS = frozenset({"/v1/messages/count_tokens", "/v1/messages/count_tokens?beta=true"})

#: the largest output a call may produce when its request sets no cap (the largest max output among current
#: models); what a call without `max_tokens` reserves
DEFAULT_OUTPUT_CAP = 128_000

#: tool types run by the client (the agent executes them and sends the result back): billed as tokens. Any
#: other type is a server tool (web search, web fetch, code execution, file search, image generation, remote
#: MCP): billed per use, not in tokens, and it reaches the network from outside the sandbox.
_CLIENT_TOOL_TYPES: dict[str, tuple[str, ...]] = {
    "anthropic": ("custom", "bash_", "text_editor_", "computer_", "memory_"),
    "openai-chat": ("function", "custom"),
    "openai-responses": ("function", "custom", "local_shell", "shell", "apply_patch", "computer_use"),
}
#: top-level fields that turn on what the gateway cannot meter, per API (any truthy value refuses the call)
_UNMETERED_FIELDS: dict[str, dict[str, str]] = {
    "anthropic": {"mcp_servers": "remote MCP servers are called by the provider, billed apart from tokens",
                  "container": "code-execution containers are billed by the hour, not in tokens"},
    "openai-chat": {"web_search_options": "web search is billed per search, not in tokens",
                    "audio": "audio output is priced apart from the text tokens the rate card prices"},
    "openai-responses": {"background": "background responses report usage only on later GETs, never forwarded"},
}
#: the rules, as docs/gateway.md states them
METERING_RULES = (
    "a streamed Chat Completions call must set stream_options.include_usage to true",
    *(f"{api}: `{name}` refused ({why})" for api, fields in _UNMETERED_FIELDS.items() for name, why in fields.items()),
    "a tool of a type the client does not run itself (a server tool) is refused",
)


def target_refusal(api: str, target: str) -> Refusal | None:
    """The refusal of a request target that is not exactly one of the API's (None when it is)."""
    if target in TARGETS[api]:
        return None
    why = _why_ambiguous(target)
    shown = target[:200].encode("unicode_escape").decode()
    if why:
        return Refusal("path", f"sbx: request target {shown} is not allowed: {why}", 404, "request")
    return Refusal("path", f"sbx: path {shown} is not a {api} endpoint", 404, "request")


def _why_ambiguous(target: str) -> str | None:
    path, _, query = target.partition("?")
    if not target.startswith("/"):
        return "not an origin-form path"
    if "%" in target:
        return "percent-encoded characters"
    if "#" in target:
        return "a fragment"
    if "//" in path:
        return "an empty segment (//)"
    if any(seg in (".", "..") for seg in path.split("/")):
        return "a dot segment"
    if "\\" in target or any(ord(c) < 0x21 or ord(c) > 0x7E for c in target):
        return "a character outside printable ASCII"
    if query:
        return "a query this API does not take"
    return None


class _Duplicate(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _Duplicate(f"duplicate key {k[:80]!r}")
            seen.add(k)
    for key in obj:
        if not key.isascii():
            try:
                key.encode("utf-8")
            except UnicodeEncodeError:
                raise _Duplicate(f"key {key[:80]!r} holds a lone surrogate (parsers read it differently)") from None
    return obj


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_body(raw: bytes) -> dict[str, Any] | Refusal:
    """The body as the one object every JSON parser reads the same way, or the refusal of a body that is not."""
    try:
        text = raw.decode("utf-8")
        if text.startswith("\ufeff"):
            raise ValueError("a byte-order mark")
        body = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except _Duplicate as exc:
        return Refusal("body_ambiguous", f"sbx: request body is ambiguous: {exc}", 400, "request")
    except (ValueError, RecursionError) as exc:
        return Refusal("body_json", f"sbx: request body is not strict JSON: {str(exc)[:200]}", 400, "request")
    if not isinstance(body, dict):
        return Refusal("body_json", "sbx: request body must be a JSON object", 400, "request")
    return body


def metering_refusal(api: str, body: dict[str, Any]) -> Refusal | None:
    """The refusal of a call whose usage the gateway would not see or could not price (METERING_RULES)."""
    if api == "openai-chat" and body.get("stream"):
        options = body.get("stream_options")
        if not (isinstance(options, dict) and options.get("include_usage") is True):
            return _unmetered("a streamed chat completion must set stream_options.include_usage: true")
    for name, why in _UNMETERED_FIELDS[api].items():
        if body.get(name):
            return _unmetered(f"`{name}` is not allowed: {why}")
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        return Refusal("body_json", "sbx: `tools` must be a list", 400, "request")
    server = _server_tool(api, tools or [])
    if server is not None:
        return _unmetered(f"tool type {server[:60]!r} is a server tool, billed apart from tokens")
    return None


def _server_tool(api: str, tools: list[Any], depth: int = 0) -> str | None:
    """The type of the first tool in `tools` that the provider runs itself, or None when the client runs them
    all. A Responses `namespace` groups tools (Codex: MCP and dynamic tools), so its members are checked; a
    `tool_search` is the client's when its `execution` says so (Codex loads deferred tools itself)."""
    for tool in tools:
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind is None and api == "anthropic":
            continue  # an Anthropic tool without a type is a custom (client) tool
        if api == "openai-responses" and kind == "namespace" and depth == 0:
            inner = tool.get("tools")
            found = _server_tool(api, inner, depth + 1) if isinstance(inner, list) else "namespace"
            if found is not None:
                return found
            continue
        if api == "openai-responses" and kind == "tool_search" and tool.get("execution") == "client":
            continue
        if not (isinstance(kind, str) and kind.startswith(_CLIENT_TOOL_TYPES[api])):
            return str(kind)
    return None


def _unmetered(why: str) -> Refusal:
    return Refusal("unmetered", f"sbx: {why} (every model call is metered)", 400, "request")


@dataclass(frozen=True)
class WorstCase:
    """The most a call can be billed for, before it is made: reserved until its usage is known."""

    input: int
    output: int

    @property
    def tokens(self) -> int:
        return self.input + self.output


def worst_case(api: str, target: str, body: dict[str, Any], body_bytes: int,
               output_cap: int = DEFAULT_OUTPUT_CAP) -> WorstCase:
    """Input: the body's bytes (a token is at least one byte of text, so this bounds the text the request
    carries; inputs the provider adds, such as an image by URL or a `previous_response_id`'s stored turns, are
    not in it, and what they add past the reservation is counted apart: RunTotals.over_reservation_tokens). Output: the request's
    own cap (`max_tokens`, `max_completion_tokens`, `max_output_tokens`; times `n` choices for Chat), or
    `output_cap` where it sets none or an unusable one. Token counting is free: nothing."""
    if target in FREE_TARGETS:
        return WorstCase(0, 0)
    names = {"anthropic": ("max_tokens",), "openai-chat": ("max_completion_tokens", "max_tokens"),
             "openai-responses": ("max_output_tokens",)}[api]
    caps = [v for v in (body.get(n) for n in names) if _count(v)]
    out = min(max(caps), output_cap) if caps else output_cap
    if api == "openai-chat":
        n = body.get("n")
        out *= min(n, 128) if _count(n) else 1
    return WorstCase(body_bytes, out)


def _count(value: object) -> TypeGuard[int]:
    """A positive int that is not a bool (JSON true is no token count)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
