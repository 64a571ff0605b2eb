"""Round-3 attacks on what the gateway forwards (issue 20, items 1 and 2), in-process against a logging
upstream: the path the policy decides on is the path the upstream gets, and the body is read once, strictly.

Before the fix, `POST /v1/chat/completions%3F/../../../../admin/keys` reached the upstream as `/admin/keys`
with the real key, and `{"\\u0073tream": true}` was a streamed Chat call with no usage."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.gateway import ModelLimits, read_transcript
from orchestrator.gateway.policy import TARGETS
from orchestrator.gateway.server import Gateway
from orchestrator.gateway.thread import GatewayThread
from orchestrator.specs.endpoints import Endpoint
from tests.gateway.conftest import KEY
from tests.gateway.upstream import LoggingUpstream, logging_upstream

#: every smuggling form found, per API: a target the policy might decide one way and a client or server
#: normalise another. None of them may reach the upstream.
SMUGGLED = {
    "anthropic": [
        "/v1/messages%3F/../../../v1/messages/batches", "/v1/messages%3F/../../../../admin/keys",
        "/v1/messages/../messages/batches", "/v1/messages/batches", "/v1/messages/batches?beta=true",
        "/v1/./messages", "//v1/messages", "/v1//messages", "/v1/messages/", "/v1/messages%2Fbatches",
        "/v1/%6d%65ssages", "/v1/messages?beta=true&x=1", "/v1/messages?beta=false", "/v1/messages?",
        "/v1/messages#frag", "/v1/messages?beta=true#x", "/v1/messages;x=1", "/V1/messages", "/v1/messages%00",
        "/v1/messages\\..\\batches", "/x", "/../x", "/v1/files", "/v1/models", "http://evil.example/v1/messages",
        "/v1/messages/count_tokens/../../admin", "/v1/messages%3Fbeta=true",
    ],
    "openai-chat": [
        "/v1/chat/completions%3F/../../../../admin/keys", "/v1/chat/completions/../../files", "/v1/chat/./completions",
        "/v1/chat/completions?x=1", "/v1/chat/completions?", "/v1/chat/completions#x", "/v1/chat%2Fcompletions",
        "//v1/chat/completions", "/v1/chat//completions", "/v1/chat/completions/", "/v1/chat/completions%20",
        "/v1/batches", "/v1/files", "/v1/embeddings", "/v1/chat/completions;a", "/v1/%2e%2e/admin", "/x",
        "http://evil.example/v1/chat/completions", "/v1/chat/completions?api-version=2024-01-01",
    ],
    "openai-responses": [
        "/v1/responses%3F/../../../../admin/keys", "/v1/responses/resp_123", "/v1/responses/resp_1/cancel",
        "/v1/responses/../files", "/v1/responses?stream=true", "/v1/responses#x", "/v1/./responses", "//v1/responses",
        "/v1/responses/", "/v1/responses%2F..%2Ffiles", "/v1/conversations", "/x", "/v1/responses/input_items",
    ],
}


#: targets aiohttp's HTTP parser refuses itself (400, its own text), before the gateway sees the call
PARSER_REFUSED = ["*", "/v1/messages\x7f", "/v1/mess ages"]


def _raw_call(sock: Path, target: str, body: bytes = b'{"model":"m","max_tokens":5,"messages":[]}') -> tuple[int, bytes]:
    """One request with the target exactly as given on the request line (no client normalises it)."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(str(sock))
    try:
        s.sendall(f"POST {target} HTTP/1.1\r\nhost: sandbox\r\ncontent-type: application/json\r\n"
                  f"authorization: Bearer dummy\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n".encode()
                  + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    finally:
        s.close()
    head, _, payload = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), payload


@pytest.fixture
def upstream() -> Iterator[tuple[LoggingUpstream, str]]:
    with logging_upstream() as up:
        yield up


@pytest.mark.parametrize("prefix", ["", "/base/path"])
@pytest.mark.parametrize("api", sorted(SMUGGLED))
def test_only_the_apis_own_targets_reach_the_upstream_and_only_they_carry_the_key(
        api: str, prefix: str, upstream: tuple[LoggingUpstream, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    up, url = upstream
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    ep = Endpoint(name="e", api=api, base_url=url + prefix, key_env="SBX_TEST_KEY")
    with GatewayThread(Gateway({"e": ep}, socket_root=tmp_path / "s")) as gw:
        sock = gw.open_run("r", "e", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
        answers = {t: _raw_call(sock, t) for t in SMUGGLED[api]}
        allowed = {t: _raw_call(sock, t)[0] for t in sorted(TARGETS[api])}
        parser = {t: _raw_call(sock, t)[0] for t in PARSER_REFUSED}
        totals = gw.close_run("r")
    refused = {t: status for t, (status, _) in answers.items() if status != 404}
    assert not refused, refused
    assert set(parser.values()) == {400}
    for target, (_, body) in answers.items():  # the API's own error shape
        error = json.loads(body)["error"]
        assert "sbx:" in error["message"], target
        assert (json.loads(body).get("type") == "error") == (api == "anthropic")
    assert set(allowed.values()) == {200}
    # the upstream saw exactly the allowed targets, byte for byte under the prefix, and the key only there
    assert [s.target for s in up.seen] == [prefix + t for t in sorted(TARGETS[api])]
    key_header = "x-api-key" if api == "anthropic" else "authorization"
    assert all(KEY in s.headers[key_header] for s in up.seen)
    assert (totals.forwarded, totals.refused) == (len(TARGETS[api]), len(SMUGGLED[api]))
    calls = read_transcript(tmp_path / "t.jsonl.gz")
    assert all(c["path"].startswith("/") for c in calls)  # the transcript stays readable by its strict reader


def test_headers_that_name_another_method_or_path_never_reach_the_upstream(
        upstream: tuple[LoggingUpstream, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    up, url = upstream
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    overrides = {"X-HTTP-Method-Override": "DELETE", "X-Original-URL": "/admin/keys", "X-Rewrite-URL": "/admin",
                 "X-Forwarded-Prefix": "/admin", "X-Forwarded-Host": "evil.example", "Forwarded": "host=evil.example",
                 "Host": "evil.example"}
    with GatewayThread(Gateway({"e": Endpoint(name="e", api="openai-chat", base_url=url, key_env="SBX_TEST_KEY")},
                               socket_root=tmp_path / "s")) as gw:
        sock = gw.open_run("r", "e", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(sock))
        body = _chat()
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in overrides.items())
                  + b"content-type: application/json\r\nconnection: close\r\ncontent-length: %d\r\n\r\n" % len(body)
                  + body)
        assert s.recv(65536).startswith(b"HTTP/1.1 200")
        s.close()
        gw.close_run("r")
    (seen,) = up.seen
    assert not {k.lower() for k in overrides} - {"host"} & set(seen.headers)
    assert seen.headers["host"] == url.split("//")[1]


def _chat(**extra: object) -> bytes:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}], **extra}).encode()


#: bodies every JSON parser does not read alike, or whose usage the gateway would not see, per API
BODIES: list[tuple[str, bytes, str]] = [
    ("openai-chat", b'{"model":"m","messages":[],"\\u0073tream":true}', "unmetered"),   # escaped key: still `stream`
    ("openai-chat", _chat(stream=1), "unmetered"),                                      # truthy, not True
    ("openai-chat", _chat(stream="yes"), "unmetered"),
    ("openai-chat", _chat(stream=True, stream_options={"include_usage": 1}), "unmetered"),
    ("openai-chat", _chat(stream=True, stream_options={"include_usage": "true"}), "unmetered"),
    ("openai-chat", b'{"model":"m","messages":[],"stream":false,"stream":true}', "body_ambiguous"),
    ("openai-chat", b'{"model":"m","messages":[],"stream_options":{"include_usage":true,"include_usage":false},'
     b'"stream":true}', "body_ambiguous"),
    ("openai-chat", b'{"model":"m","messages":[],"stream":true,"stream_options":{"include_usage":true},'
     b'"\\ud800":1,"\\ud800":2}', "body_ambiguous"),
    ("openai-chat", b'{"model":"m","n":NaN}', "body_json"),
    ("openai-chat", b'\xef\xbb\xbf{"model":"m"}', "body_json"),
    ("openai-chat", '{"model":"m"}'.encode("utf-16"), "body_json"),
    ("openai-chat", b'[{"model":"m"}]', "body_json"),
    ("openai-chat", b'{"model":"m"', "body_json"),
    ("openai-chat", b"[" * 100_000 + b"]" * 100_000, "body_json"),
    ("openai-chat", _chat(web_search_options={}) .replace(b"{}", b'{"x":1}'), "unmetered"),
    ("openai-chat", _chat(tools=[{"type": "web_search"}]), "unmetered"),
    ("openai-chat", _chat(modalities=["text", "audio"], audio={"voice": "alloy", "format": "wav"}), "unmetered"),
    ("openai-responses", b'{"model":"m","input":"x","\\u0062ackground":true}', "unmetered"),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "background": 1}).encode(), "unmetered"),
    ("openai-responses", b'{"model":"m","input":"x","background":false,"background":true}', "body_ambiguous"),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "tools": [{"type": "web_search_preview"}]}).encode(),
     "unmetered"),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "tools": [
        {"type": "mcp", "server_label": "x", "server_url": "https://evil.example"}]}).encode(), "unmetered"),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "tools": [{"type": "code_interpreter"}]}).encode(),
     "unmetered"),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "tools": [{"type": "namespace", "name": "n",
        "tools": [{"type": "function", "name": "f"}, {"type": "web_search"}]}]}).encode(), "unmetered"),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "tools": [
        {"type": "tool_search", "execution": "server"}]}).encode(), "unmetered"),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "tools": [{"type": "image_generation"}]}).encode(),
     "unmetered"),
    ("anthropic", json.dumps({"model": "m", "max_tokens": 5, "messages": [], "tools": [
        {"type": "web_search_20250305", "name": "web_search"}]}).encode(), "unmetered"),
    ("anthropic", json.dumps({"model": "m", "max_tokens": 5, "messages": [], "tools": [
        {"type": "web_fetch_20250910", "name": "web_fetch"}]}).encode(), "unmetered"),
    ("anthropic", json.dumps({"model": "m", "max_tokens": 5, "messages": [], "mcp_servers": [
        {"type": "url", "url": "https://evil.example", "name": "x"}]}).encode(), "unmetered"),
    ("anthropic", b'{"model":"m","max_tokens":5,"messages":[],"stream":true,"stream":false}', "body_ambiguous"),
]
#: bodies that must go through (the forms real CLIs send)
FINE: list[tuple[str, bytes]] = [
    ("openai-chat", _chat(stream=True, stream_options={"include_usage": True})),
    ("openai-chat", _chat(stream=0, tools=[{"type": "function", "function": {"name": "bash"}}])),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "stream": True, "background": False,
                                     "tools": [{"type": "function", "name": "f"}, {"type": "local_shell"}]}).encode()),
    ("openai-responses", json.dumps({"model": "m", "input": "x", "tools": [   # Codex: MCP tools, deferred loading
        {"type": "namespace", "name": "mcp__x", "description": "", "tools": [{"type": "function", "name": "f"}]},
        {"type": "tool_search", "execution": "client", "description": "d", "parameters": {}}]}).encode()),
    ("anthropic", json.dumps({"model": "m", "max_tokens": 5, "messages": [], "tools": [
        {"name": "Bash", "input_schema": {}}, {"type": "bash_20250124", "name": "bash"}]}).encode()),
    ("anthropic", '{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"é \\u00e9"}]}'.encode()),
]


@pytest.mark.parametrize(("api", "body", "reason"), BODIES, ids=[f"{a}-{i}" for i, (a, _, _) in enumerate(BODIES)])
def test_a_body_read_two_ways_or_unmetered_is_refused_before_the_upstream(
        api: str, body: bytes, reason: str, upstream: tuple[LoggingUpstream, str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    up, url = upstream
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    ep = Endpoint(name="e", api=api, base_url=url, key_env="SBX_TEST_KEY")
    events: list = []
    target = "/v1/messages" if api == "anthropic" else sorted(TARGETS[api])[0]
    with GatewayThread(Gateway({"e": ep}, socket_root=tmp_path / "s",
                               on_event=lambda *e: events.append(e))) as gw:
        sock = gw.open_run("r", "e", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
        status, answer = _raw_call(sock, target, body)
        totals = gw.close_run("r")
    assert status == 400 and "sbx:" in json.loads(answer)["error"]["message"]
    assert up.seen == [] and totals.forwarded == 0
    assert [e[2]["reason"] for e in events] == [reason]


@pytest.mark.parametrize(("api", "body"), FINE, ids=[f"{a}-{i}" for i, (a, _) in enumerate(FINE)])
def test_the_forms_real_clients_send_go_through_unchanged(api: str, body: bytes, upstream: tuple[LoggingUpstream, str],
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    up, url = upstream
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    ep = Endpoint(name="e", api=api, base_url=url, key_env="SBX_TEST_KEY")
    target = "/v1/messages?beta=true" if api == "anthropic" else sorted(TARGETS[api])[0]
    with GatewayThread(Gateway({"e": ep}, socket_root=tmp_path / "s")) as gw:
        sock = gw.open_run("r", "e", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
        status, _ = _raw_call(sock, target, body)
        gw.close_run("r")
    assert status == 200 and [(s.target, s.body_bytes) for s in up.seen] == [(target, len(body))]
