"""The gateway's pure parts: SSE parsing, usage per API, transcript bounds, rate cards."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.gateway import transcript as tr
from orchestrator.gateway.sse import SSEParser
from orchestrator.gateway.usage import StreamUsage, TokenUsage, from_body

STREAM = (b"event: message_start\r\ndata: {\"a\":1}\r\n\r\n: a comment\n\nevent: ping\ndata: x\ndata:  y\n\n"
          b"data: last\rid: 3\r\r")
EXPECTED = [("message_start", '{"a":1}'), ("ping", "x\n y"), (None, "last")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=8))
def test_sse_parser_is_independent_of_chunking(cuts: list[int]) -> None:
    p, out, last = SSEParser(), [], 0
    for c in sorted(cuts) + [len(STREAM)]:
        out += p.feed(STREAM[last:c])
        last = c
    assert out + p.close() == EXPECTED


def test_sse_close_flushes_an_unterminated_event() -> None:
    p = SSEParser()
    assert p.feed(b"data: [DONE]") == [] and p.close() == [(None, "[DONE]")]


def test_anthropic_stream_usage_takes_start_input_and_last_delta() -> None:
    t = StreamUsage("anthropic")
    t.feed("message_start", json.dumps({"type": "message_start", "message": {"usage": {
        "input_tokens": 10, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 30, "output_tokens": 1}}}))
    t.feed("content_block_delta", '{"type":"content_block_delta","delta":{"text":"usage"}}')
    t.feed("message_delta", '{"type":"message_delta","usage":{"output_tokens":7}}')
    t.feed("message_delta", '{"type":"message_delta","usage":{"output_tokens":9,"output_tokens_details":{"thinking_tokens":4}}}')
    t.feed("message_stop", '{"type":"message_stop"}')
    assert t.usage == TokenUsage(input=60, cached_input=30, cache_write=20, output=9, reasoning=4) and t.finished


def test_anthropic_error_event_inside_a_200_stream() -> None:
    t = StreamUsage("anthropic")
    t.feed("error", '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    assert t.error == "Overloaded" and not t.finished


def test_chat_usage_only_from_the_usage_chunk() -> None:
    t = StreamUsage("openai-chat")
    t.feed(None, '{"choices":[{"delta":{"content":"hi"}}],"usage":null}')
    assert t.usage is None
    t.feed(None, json.dumps({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 20,
           "prompt_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 5},
           "completion_tokens_details": {"reasoning_tokens": 8}}}))
    t.feed(None, "[DONE]")
    assert t.usage == TokenUsage(input=100, cached_input=60, cache_write=5, output=20, reasoning=8) and t.finished


def test_responses_usage_on_terminal_events_and_bodies() -> None:
    u = {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 10}, "output_tokens": 5,
         "output_tokens_details": {"reasoning_tokens": 3}}
    for kind in ("response.completed", "response.incomplete"):
        t = StreamUsage("openai-responses")
        t.feed(kind, json.dumps({"type": kind, "response": {"usage": u}}))
        assert t.usage == TokenUsage(50, 10, 0, 5, 3) and t.finished
    assert from_body("openai-responses", json.dumps({"usage": u})) == TokenUsage(50, 10, 0, 5, 3)
    assert from_body("anthropic", b"not json") is None and from_body("openai-chat", b'{"usage": null}') is None
    t = StreamUsage("openai-responses")
    t.feed("response.failed", '{"type":"response.failed","response":{"error":{"message":"boom"}}}')
    assert t.error == "boom"


def test_usage_ignores_negative_and_non_numbers() -> None:
    assert from_body("openai-chat", '{"usage":{"prompt_tokens":-5,"completion_tokens":"9"}}') == TokenUsage()


def test_transcript_bounds_and_marks_truncation(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tr, "MAX_BODY_BYTES", 10)
    rec: dict = {}
    tr.body_record("aaaaaaaaaé€".encode(), rec)  # the cut falls inside a multi-byte character
    assert rec == {"body": "aaaaaaaaa", "truncated": len("aaaaaaaaaé€".encode())}
    rec = {}
    tr.body_record(b"\xff\xfe\x00", rec)
    assert rec == {"body_b64": "//4A"}
    events = tr.EventsRecord()
    monkeypatch.setattr(tr, "MAX_EVENTS", 2)
    for i in range(5):
        events.add("e", str(i))
    assert events.events == [["e", "0"], ["e", "1"]] and events.dropped == 3


def test_transcript_headers_redact_credentials() -> None:
    h = tr.headers_record({"Authorization": "Bearer x", "X-Api-Key": "k", "Anthropic-Version": "2023-06-01"})
    assert h == {"authorization": "<redacted>", "x-api-key": "<redacted>", "anthropic-version": "2023-06-01"}


def test_transcript_of_a_crashed_writer_is_readable(tmp_path: Path) -> None:
    w = tr.TranscriptWriter(tmp_path / "t.jsonl.gz")
    w.write({"index": 1, "x": "secret-value"}, secret="secret-value")
    w.write({"index": 0})
    # not closed: the gzip stream has no end marker, as after a crash
    records = tr.read_transcript(tmp_path / "t.jsonl.gz")
    assert records == [{"index": 0}, {"index": 1, "x": "<redacted>"}]
    w.close()
    assert len(gzip.decompress((tmp_path / "t.jsonl.gz").read_bytes()).splitlines()) == 2
