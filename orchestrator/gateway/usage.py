"""Token usage as each wire API reports it, normalised to one shape.

Normalised (the transcript's `usage`): `input` = every input token, cached and cache-write included;
`cached_input` and `cache_write` are parts of `input`; `output` includes `reasoning`.

- Anthropic Messages: input = input_tokens + cache_read_input_tokens + cache_creation_input_tokens. A stream
  has the input counts in `message_start.message.usage` and the cumulative output in each `message_delta`
  (which may repeat input counts: the last value seen wins). Reasoning: `output_tokens_details.thinking_tokens`
  when the API reports it (else 0: thinking is inside output_tokens, not split out).
- OpenAI Chat: prompt_tokens (cached included), prompt_tokens_details.cached_tokens / cache_write_tokens,
  completion_tokens, completion_tokens_details.reasoning_tokens. A stream reports usage only in a chunk
  with `choices: []` when `stream_options.include_usage` was set; otherwise there is none.
- OpenAI Responses: usage.input_tokens, input_tokens_details.cached_tokens / cache_write_tokens,
  output_tokens, output_tokens_details.reasoning_tokens; in a stream on `response.completed` (also read from
  `response.incomplete` / `response.failed` when present).
"""

from __future__ import annotations

import json
from typing import Any

from orchestrator.specs.usage import TokenUsage

APIS = ("anthropic", "openai-chat", "openai-responses")


def _int(obj: Any, *path: str) -> int:
    for key in path:
        if not isinstance(obj, dict):
            return 0
        obj = obj.get(key)
    return int(obj) if isinstance(obj, (int, float)) and not isinstance(obj, bool) and obj >= 0 else 0


def _anthropic(u: dict[str, Any]) -> TokenUsage:
    read, write = _int(u, "cache_read_input_tokens"), _int(u, "cache_creation_input_tokens")
    return TokenUsage(input=_int(u, "input_tokens") + read + write, cached_input=read, cache_write=write,
                 output=_int(u, "output_tokens"), reasoning=_int(u, "output_tokens_details", "thinking_tokens"))


def _chat(u: dict[str, Any]) -> TokenUsage:
    return TokenUsage(input=_int(u, "prompt_tokens"), cached_input=_int(u, "prompt_tokens_details", "cached_tokens"),
                 cache_write=_int(u, "prompt_tokens_details", "cache_write_tokens"),
                 output=_int(u, "completion_tokens"),
                 reasoning=_int(u, "completion_tokens_details", "reasoning_tokens"))


def _responses(u: dict[str, Any]) -> TokenUsage:
    return TokenUsage(input=_int(u, "input_tokens"), cached_input=_int(u, "input_tokens_details", "cached_tokens"),
                 cache_write=_int(u, "input_tokens_details", "cache_write_tokens"),
                 output=_int(u, "output_tokens"), reasoning=_int(u, "output_tokens_details", "reasoning_tokens"))


_SHAPES = {"anthropic": _anthropic, "openai-chat": _chat, "openai-responses": _responses}


def from_body(api: str, body: bytes | str) -> TokenUsage | None:
    """TokenUsage of a non-streamed JSON response body, or None when it has none."""
    try:
        obj = json.loads(body)
    except (ValueError, TypeError):
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("usage"), dict):
        return None
    return _SHAPES[api](obj["usage"])


class StreamUsage:
    """TokenUsage accumulated from a stream's events, fed in order."""

    _TERMINAL = {"response.completed", "response.incomplete", "response.failed"}

    def __init__(self, api: str) -> None:
        self.api = api
        self._anthropic: dict[str, Any] = {}
        self._usage: TokenUsage | None = None
        self.finished = False  # the stream's own end marker was seen
        self.error: str | None = None  # an error event inside a 200 stream (e.g. Anthropic overloaded_error)

    def feed(self, name: str | None, data: str) -> None:
        if self.api == "openai-chat" and data.strip() == "[DONE]":
            self.finished = True
            return
        if self.api == "openai-responses":
            if not any(t in data for t in self._TERMINAL) and '"error"' not in data:
                return  # fast path: most events are content deltas
        elif self.api == "openai-chat":
            if '"usage":{' not in data.replace(" ", "") and '"error"' not in data:
                return  # every chunk of a stream asked with include_usage carries "usage": null
        elif '"usage"' not in data and "message_stop" not in data and "error" not in data:
            return
        try:
            obj = json.loads(data)
        except ValueError:
            return
        if not isinstance(obj, dict):
            return
        kind = obj.get("type") or name
        if kind == "error" or (self.api == "openai-chat" and isinstance(obj.get("error"), dict)):
            err = obj.get("error")
            self.error = (err.get("message") or err.get("type")) if isinstance(err, dict) else str(err or data)
            self.error = str(self.error)[:300]
            return
        if self.api == "anthropic":
            if kind == "message_start" and isinstance(obj.get("message"), dict):
                self._merge(obj["message"].get("usage"))
            elif kind == "message_delta":
                self._merge(obj.get("usage"))
            elif kind == "message_stop":
                self.finished = True
        elif self.api == "openai-chat":
            if isinstance(obj.get("usage"), dict):
                self._usage = _chat(obj["usage"])
        elif kind in self._TERMINAL:
            self.finished = True
            if kind == "response.failed":
                err = (obj.get("response") or {}).get("error") or {}
                self.error = str(err.get("message") if isinstance(err, dict) else err or "response.failed")[:300]
            response = obj.get("response")
            if isinstance(response, dict) and isinstance(response.get("usage"), dict):
                self._usage = _responses(response["usage"])

    def _merge(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self._anthropic.update({k: v for k, v in usage.items() if v is not None})
            self._usage = _anthropic(self._anthropic)

    @property
    def usage(self) -> TokenUsage | None:
        return self._usage
