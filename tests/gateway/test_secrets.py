"""The real key reaches the upstream and nothing else: not the agent's responses, the transcript, the logs or
error messages, even when an upstream echoes it back."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from orchestrator.gateway import ModelLimits, read_transcript
from orchestrator.gateway.scrub import Scrubber
from orchestrator.gateway.server import Gateway
from orchestrator.gateway.thread import GatewayThread
from orchestrator.specs.endpoints import Endpoint
from tests.gateway.conftest import KEY, uds_client


@pytest.fixture
def echo_url() -> Iterator[tuple[str, list]]:
    """An upstream that echoes the headers it received, in a JSON body and in a stream split mid-key."""
    seen: list[dict[str, str]] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        headers = {k.lower(): v for k, v in request.headers.items()}
        seen.append(headers)
        body = await request.json()
        if body.get("stream"):
            resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
            await resp.prepare(request)
            text = json.dumps({"choices": [{"delta": {"content": json.dumps(headers)}}]})
            frame = f"data: {text}\n\n".encode()
            cut = frame.index(KEY.encode()) + 7  # split the frame inside the key
            await resp.write(frame[:cut])
            await asyncio.sleep(0.05)
            await resp.write(frame[cut:] + b"data: [DONE]\n\n")
            await resp.write_eof()
            return resp
        return web.json_response({"echo": headers, "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
                                 headers={"x-echo-key": headers.get("authorization", "")})

    loop = asyncio.new_event_loop()
    box: dict = {}

    def run() -> None:
        asyncio.set_event_loop(loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", handle)
        runner = web.AppRunner(app, access_log=None)
        loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        loop.run_until_complete(site.start())
        box["url"] = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"
        box["runner"] = runner
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    ready = threading.Event()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    ready.wait(10)
    yield box["url"], seen
    loop.call_soon_threadsafe(loop.stop)
    t.join(10)


def test_key_goes_upstream_only(echo_url, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capfd: pytest.CaptureFixture[str], clients: list) -> None:
    url, seen = echo_url
    key_file = tmp_path / "key.txt"
    key_file.write_text(KEY + "\n")
    eps = {"echo": Endpoint(name="echo", api="openai-chat", base_url=url, key_file=key_file)}
    agent_saw = []
    with GatewayThread(Gateway(eps, socket_root=tmp_path / "sock")) as gw:
        sock = gw.open_run("run-a", "echo", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
        http = uds_client(sock)
        clients.append(http)
        r = http.post("/v1/chat/completions", json={"model": "m", "messages": []}, headers={
            "authorization": "Bearer dummy", "accept-encoding": "gzip, zstd", "te": "trailers",
            "proxy-authorization": "Basic abc", "x-sbx-seed": "7", "x-custom": "kept"})
        agent_saw.append(r.text + json.dumps(dict(r.headers)))
        with http.stream("POST", "/v1/chat/completions", json={"model": "m", "stream": True, "stream_options": {"include_usage": True}, "messages": []}) as s:
            agent_saw.append(b"".join(s.iter_raw()).decode())
        totals = gw.close_run("run-a")
    # upstream: the real key as a bearer token, the agent's dummy gone, hop-by-hop and spoofed headers dropped
    assert seen[0]["authorization"] == f"Bearer {KEY}"
    assert seen[0]["accept-encoding"] == "identity" and seen[0]["x-custom"] == "kept"
    assert not {"te", "proxy-authorization", "x-sbx-seed"} & set(seen[0])
    # the agent got the echo with the key replaced, also where the stream split it across two chunks
    assert all(KEY not in text for text in agent_saw)
    assert "Bearer <redacted>" in agent_saw[0] and "Bearer <redacted>" in agent_saw[1]
    assert totals.ok == 2
    written = gzip.decompress((tmp_path / "t.jsonl.gz").read_bytes()).decode()
    assert KEY not in written and "<redacted>" in written
    assert read_transcript(tmp_path / "t.jsonl.gz")[0]["request"]["headers"]["authorization"] == "<redacted>"
    out, err = capfd.readouterr()
    assert KEY not in out + err


def test_missing_key_names_its_source_not_a_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.failures import ConfigError

    monkeypatch.delenv("SBX_NO_SUCH_KEY", raising=False)
    eps = {"x": Endpoint(name="x", api="anthropic", base_url="http://127.0.0.1:9", key_env="SBX_NO_SUCH_KEY")}
    with GatewayThread(Gateway(eps, socket_root=tmp_path)) as gw:
        with pytest.raises(ConfigError, match="SBX_NO_SUCH_KEY is not set"):
            gw.open_run("r", "x", "m", ModelLimits(), tmp_path / "t.jsonl.gz")


@pytest.mark.parametrize("cut", range(1, 12))
def test_scrubber_catches_a_key_split_anywhere(cut: int) -> None:
    secret = "sk-ABCDEFGH"
    data = b"xx sk-ABCDEFGH yy sk-ABC"
    s = Scrubber(secret)
    out = s.feed(data[:cut]) + s.feed(data[cut:]) + s.flush()
    assert out == b"xx <redacted> yy sk-ABC"
