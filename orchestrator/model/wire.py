"""The stand-in's replies in each wire API's own shapes: a JSON body, or the ordered SSE events of a stream.

Shapes follow the official SDK types (anthropic-sdk-python `types/message.py`, `raw_message_stream_event.py`;
openai-python `types/chat/chat_completion*.py`, `types/responses/response*.py`), including the streaming
quirks a usage parser must cope with: Anthropic's `message_start` says `output_tokens: 1` and the last
`message_delta` has the real count; Chat streams carry usage only in a final `choices: []` chunk and only when
`stream_options.include_usage` is set; Responses put usage on `response.completed`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from orchestrator.model.reply import Reply
from orchestrator.specs.usage import TokenUsage

CREATED = 1_767_225_600  # fixed timestamp: replies are byte-for-byte reproducible
_PIECE = 24

Event = tuple[str | None, str]


def _pieces(text: str) -> list[str]:
    return [text[i:i + _PIECE] for i in range(0, len(text), _PIECE)] or [""]


def _dump(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# --- Anthropic Messages ---------------------------------------------------------------------------------


def anthropic_usage(u: TokenUsage, *, start: bool = False) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": u.input - u.cached_input - u.cache_write,
        "cache_creation_input_tokens": u.cache_write,
        "cache_read_input_tokens": u.cached_input,
        "output_tokens": 1 if start else u.output,
    }
    if u.reasoning and not start:
        usage["output_tokens_details"] = {"thinking_tokens": u.reasoning}
    return usage


def _anthropic_blocks(r: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if r.text:
        blocks.append({"type": "text", "text": r.text})
    if r.tool:
        blocks.append({"type": "tool_use", "id": r.ident("toolu_"), "name": r.tool, "input": r.arguments or {}})
    return blocks


def anthropic_body(r: Reply, model: str) -> dict[str, Any]:
    return {
        "id": r.ident("msg_"), "type": "message", "role": "assistant", "model": model,
        "content": _anthropic_blocks(r), "stop_reason": "tool_use" if r.tool else "end_turn",
        "stop_sequence": None, "usage": anthropic_usage(r.usage),
    }


def anthropic_events(r: Reply, model: str) -> Iterator[Event]:
    start = anthropic_body(r, model) | {"content": [], "stop_reason": None, "usage": anthropic_usage(r.usage, start=True)}
    yield "message_start", _dump({"type": "message_start", "message": start})
    yield "ping", _dump({"type": "ping"})
    for i, block in enumerate(_anthropic_blocks(r)):
        if block["type"] == "text":
            yield "content_block_start", _dump({"type": "content_block_start", "index": i,
                                                "content_block": {"type": "text", "text": ""}})
            for piece in _pieces(block["text"]):
                yield "content_block_delta", _dump({"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "text_delta", "text": piece}})
        else:
            yield "content_block_start", _dump({"type": "content_block_start", "index": i, "content_block":
                                                block | {"input": {}}})
            for piece in _pieces(_dump(block["input"])):
                yield "content_block_delta", _dump({"type": "content_block_delta", "index": i,
                                                    "delta": {"type": "input_json_delta", "partial_json": piece}})
        yield "content_block_stop", _dump({"type": "content_block_stop", "index": i})
    usage = anthropic_usage(r.usage)
    yield "message_delta", _dump({"type": "message_delta", "delta": {"stop_reason": "tool_use" if r.tool else "end_turn",
                                  "stop_sequence": None}, "usage": {k: v for k, v in usage.items() if k.startswith("output")}})
    yield "message_stop", _dump({"type": "message_stop"})


# --- OpenAI Chat Completions ----------------------------------------------------------------------------


def chat_usage(u: TokenUsage) -> dict[str, Any]:
    return {
        "prompt_tokens": u.input, "completion_tokens": u.output, "total_tokens": u.input + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cached_input, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }


def chat_body(r: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.text or None, "refusal": None}
    if r.tool:
        message["tool_calls"] = [{"id": r.ident("call_"), "type": "function",
                                  "function": {"name": r.tool, "arguments": r.arguments_json}}]
    return {
        "id": r.ident("chatcmpl-"), "object": "chat.completion", "created": CREATED, "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if r.tool else "stop"}],
        "usage": chat_usage(r.usage), "system_fingerprint": None,
    }


def chat_events(r: Reply, model: str, include_usage: bool) -> Iterator[Event]:
    base = {"id": r.ident("chatcmpl-"), "object": "chat.completion.chunk", "created": CREATED, "model": model,
            "system_fingerprint": None}
    if include_usage:
        base["usage"] = None

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Event:
        return None, _dump(base | {"choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    if r.text:
        for piece in _pieces(r.text):
            yield chunk({"content": piece})
    if r.tool:
        yield chunk({"tool_calls": [{"index": 0, "id": r.ident("call_"), "type": "function",
                                     "function": {"name": r.tool, "arguments": ""}}]})
        for piece in _pieces(r.arguments_json):
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    yield chunk({}, "tool_calls" if r.tool else "stop")
    if include_usage:
        yield None, _dump(base | {"choices": [], "usage": chat_usage(r.usage)})
    yield None, "[DONE]"


# --- OpenAI Responses -----------------------------------------------------------------------------------


def responses_usage(u: TokenUsage) -> dict[str, Any]:
    return {
        "input_tokens": u.input, "input_tokens_details": {"cached_tokens": u.cached_input},
        "output_tokens": u.output, "output_tokens_details": {"reasoning_tokens": u.reasoning},
        "total_tokens": u.input + u.output,
    }


def _responses_items(r: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if r.text:
        items.append({"type": "message", "id": r.ident("msg_"), "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": r.text, "annotations": []}]})
    if r.tool:
        items.append({"type": "function_call", "id": r.ident("fc_"), "call_id": r.ident("call_"), "name": r.tool,
                      "arguments": r.arguments_json, "status": "completed"})
    return items


def responses_body(r: Reply, model: str, *, done: bool = True) -> dict[str, Any]:
    return {
        "id": r.ident("resp_"), "object": "response", "created_at": CREATED,
        "status": "completed" if done else "in_progress", "error": None, "incomplete_details": None,
        "instructions": None, "max_output_tokens": None, "model": model,
        "output": _responses_items(r) if done else [], "parallel_tool_calls": True, "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None}, "store": False, "temperature": 1.0,
        "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [], "top_p": 1.0,
        "truncation": "disabled", "usage": responses_usage(r.usage) if done else None, "metadata": {},
    }


def responses_events(r: Reply, model: str) -> Iterator[Event]:
    seq = 0

    def ev(kind: str, **fields: Any) -> Event:
        nonlocal seq
        seq += 1
        return kind, _dump({"type": kind, "sequence_number": seq - 1, **fields})

    yield ev("response.created", response=responses_body(r, model, done=False))
    yield ev("response.in_progress", response=responses_body(r, model, done=False))
    for i, item in enumerate(_responses_items(r)):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield ev("response.output_item.added", output_index=i, item=item | {"status": "in_progress", "content": []})
            part = {"type": "output_text", "text": "", "annotations": []}
            yield ev("response.content_part.added", item_id=item["id"], output_index=i, content_index=0, part=part)
            for piece in _pieces(text):
                yield ev("response.output_text.delta", item_id=item["id"], output_index=i, content_index=0,
                         delta=piece, logprobs=[])
            yield ev("response.output_text.done", item_id=item["id"], output_index=i, content_index=0, text=text,
                     logprobs=[])
            yield ev("response.content_part.done", item_id=item["id"], output_index=i, content_index=0,
                     part=part | {"text": text})
        else:
            yield ev("response.output_item.added", output_index=i,
                     item=item | {"status": "in_progress", "arguments": ""})
            for piece in _pieces(item["arguments"]):
                yield ev("response.function_call_arguments.delta", item_id=item["id"], output_index=i, delta=piece)
            yield ev("response.function_call_arguments.done", item_id=item["id"], output_index=i,
                     name=item["name"], arguments=item["arguments"])
        yield ev("response.output_item.done", output_index=i, item=item)
    yield ev("response.completed", response=responses_body(r, model))


def render(api: str, r: Reply, model: str, *, stream: bool, include_usage: bool = True) -> Any:
    """The JSON body (stream=False) or the list of SSE events (stream=True) answering in `api`."""
    if api == "anthropic":
        return list(anthropic_events(r, model)) if stream else anthropic_body(r, model)
    if api == "openai-chat":
        return list(chat_events(r, model, include_usage)) if stream else chat_body(r, model)
    return list(responses_events(r, model)) if stream else responses_body(r, model)


def sse(events: list[Event]) -> list[bytes]:
    """Encode events as SSE frames, one bytes object per event."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        out.append(f"{head}data: {data}\n\n".encode())
    return out
