"""The gateway end to end: official SDK clients on a run's unix socket, the stand-in as upstream."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import anthropic
import httpx2 as httpx  # the HTTP client the SDKs ship with
import openai
import pytest

from orchestrator.gateway import ModelLimits, read_transcript
from orchestrator.gateway.thread import GatewayThread
from orchestrator.model import Fault, StandIn, log_totals, read_log
from tests.gateway.conftest import KEY, PRICE, RUN_DATE, uds_client
from tests.model import shapes


def _sdk(api: str, sock: Path, clients: list):
    http = uds_client(sock)
    clients.append(http)
    if api == "anthropic":
        c = anthropic.Anthropic(base_url="http://sandbox", api_key="dummy", http_client=http, max_retries=0)
    else:
        c = openai.OpenAI(base_url="http://sandbox/v1", api_key="dummy", http_client=http, max_retries=0)
    clients.append(c)
    return c


def _drive(api: str, client, stream: bool, turns: int = 3) -> list[str]:
    """Play up to `turns` model calls of a conversation; returns the commands the model ran."""
    commands: list[str] = []
    if api == "anthropic":
        messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "go", "cache_control": {"type": "ephemeral"}}]}]
        for _ in range(turns):
            kw = dict(model="m", max_tokens=1024, system="sys", tools=shapes.CLAUDE_TOOLS, messages=messages)
            if stream:
                with client.messages.stream(**kw) as s:
                    msg = s.get_final_message()
            else:
                msg = client.messages.create(**kw)
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in msg.content]})
            calls = [b for b in msg.content if b.type == "tool_use"]
            if not calls:
                break
            commands.append(calls[0].input["command"])
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": calls[0].id, "content": "ok"}]})
    elif api == "openai-chat":
        messages = [{"role": "user", "content": "go"}]
        for _ in range(turns):
            kw = dict(model="m", messages=messages, tools=shapes.PI_TOOLS)
            if stream:
                with client.chat.completions.stream(**kw, stream_options={"include_usage": True}) as s:
                    done = s.get_final_completion()
            else:
                done = client.chat.completions.create(**kw)
            m = done.choices[0].message
            messages.append(m.model_dump(exclude_none=True))
            if not m.tool_calls:
                break
            commands.append(json.loads(m.tool_calls[0].function.arguments)["command"])
            messages.append(shapes.chat_tool_result(m.tool_calls[0].id, "ok"))
    else:
        items: list[dict] = [{"role": "user", "content": "go"}]
        for _ in range(turns):
            kw = dict(model="m", input=items, tools=shapes.CODEX_TOOLS, reasoning={"effort": "low"})
            if stream:
                with client.responses.stream(**kw) as s:
                    r = s.get_final_response()
            else:
                r = client.responses.create(**kw)
            items += [o.model_dump(exclude_none=True) for o in r.output]
            calls = [o for o in r.output if o.type == "function_call"]
            if not calls:
                break
            commands.append(json.loads(calls[0].arguments)["cmd"])
            items.append({"type": "function_call_output", "call_id": calls[0].call_id, "output": "ok"})
    return commands


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", ["anthropic", "openai-chat", "openai-responses"])
def test_calls_pass_through_and_are_metered_exactly(gateway: GatewayThread, tmp_path: Path, clients: list,
                                                    api: str, stream: bool) -> None:
    transcript = tmp_path / "t" / "model-calls.jsonl.gz"
    sock = gateway.open_run("run-a", api, "m", ModelLimits(), transcript, seed=5, run_date=RUN_DATE)
    commands = _drive(api, _sdk(api, sock, clients), stream)
    totals = gateway.close_run("run-a")
    assert commands[0] == "./run_experiment" and len(commands) == 2
    calls = read_transcript(transcript)
    log = read_log(tmp_path / "standin.jsonl")
    assert len(calls) == len(log) == 3 and [c["index"] for c in calls] == [0, 1, 2]
    for call, rec in zip(calls, log):
        assert call["v"] == 1 and call["api"] == api and call["outcome"] == "ok" and call["stream"] is stream
        # the upstream got the agent's body bytes unchanged, and the run's ids from the gateway
        assert hashlib.sha256(call["request"]["body"].encode()).hexdigest() == rec["request_sha256"]
        assert rec["run_id"] == "run-a" and rec["seed"] == 5
        assert call["usage"] == rec["usage"]
        assert call["cost_usd"] == pytest.approx(PRICE.cost(type("U", (), rec["usage"])))
        assert call["request"]["headers"].get("authorization", call["request"]["headers"].get("x-api-key")) == "<redacted>"
        assert 0 < call["ttfb_s"] <= call["total_s"]
        if stream:
            assert call["response"]["body"] is None and len(call["response"]["events"]) > 3
        else:
            assert json.loads(call["response"]["body"])["usage"] and call["response"]["events"] is None
    assert totals.usage.as_dict() == log_totals(log, "run-a")
    assert totals.usage.cached_input > 0
    assert totals.cost_usd == pytest.approx(sum(c["cost_usd"] for c in calls))
    assert (totals.calls, totals.ok, totals.forwarded, totals.unpriced, totals.usage_missing) == (3, 3, 3, 0, 0)
    assert KEY not in gzip.decompress(transcript.read_bytes()).decode()
    assert not sock.exists()


def test_each_run_is_known_by_its_socket(gateway: GatewayThread, tmp_path: Path, clients: list) -> None:
    socks = {r: gateway.open_run(r, "openai-chat", "m", ModelLimits(), tmp_path / f"{r}.jsonl.gz", seed=i)
             for i, r in enumerate(["run-a", "run-b"])}
    for run, sock in socks.items():
        http = uds_client(sock)
        clients.append(http)
        # a spoofed run header from the agent is dropped; the socket decides
        r = http.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": run}]},
                      headers={"x-sbx-run-id": "run-z", "x-sbx-seed": "99"})
        assert r.status_code == 200
    totals = {r: gateway.close_run(r) for r in socks}
    log = read_log(tmp_path / "standin.jsonl")
    assert [(rec["run_id"], rec["seed"]) for rec in log] == [("run-a", 0), ("run-b", 1)]
    for run in socks:
        (call,) = read_transcript(tmp_path / f"{run}.jsonl.gz")
        assert run in call["request"]["body"]
        assert totals[run].usage.as_dict() == log_totals(log, run)


def test_call_limit_refuses_in_the_apis_shape_with_an_event(gateway: GatewayThread, tmp_path: Path, clients: list,
                                                            events: list) -> None:
    transcript = tmp_path / "t.jsonl.gz"
    sock = gateway.open_run("run-a", "anthropic", "m", ModelLimits(calls=2), transcript)
    client = _sdk("anthropic", sock, clients)
    for _ in range(2):
        client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    with pytest.raises(anthropic.BadRequestError) as err:
        client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert err.value.body["error"]["type"] == "invalid_request_error"
    assert "model_calls limit (2)" in err.value.body["error"]["message"]
    totals = gateway.close_run("run-a")
    assert (totals.forwarded, totals.refused, totals.calls) == (2, 1, 3)
    assert len(read_log(tmp_path / "standin.jsonl")) == 2  # the refused call never reached the upstream
    assert [(r, k, f["reason"]) for r, k, f in events] == [("run-a", "model.refused", "model_calls")]
    assert read_transcript(transcript)[2]["outcome"] == "refused"


def test_token_limit_ten_times_over_is_refused(gateway: GatewayThread, tmp_path: Path, clients: list,
                                               events: list) -> None:
    sock = gateway.open_run("run-a", "openai-chat", "m", ModelLimits(tokens=50), tmp_path / "t.jsonl.gz")
    client = _sdk("openai-chat", sock, clients)
    big = "word " * 400  # about 10x the limit in one prompt
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": big}])  # the call that crosses it
    refused = 0
    for _ in range(5):
        with pytest.raises(openai.RateLimitError) as err:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": big}])
        assert err.value.code == "insufficient_quota"
        refused += 1
    totals = gateway.close_run("run-a")
    assert totals.usage.tokens > 500 and totals.forwarded == 1 and totals.refused == refused == 5
    assert {f["reason"] for _, _, f in events} == {"model_tokens"}


def test_cost_limit(gateway: GatewayThread, tmp_path: Path, clients: list) -> None:
    sock = gateway.open_run("run-a", "openai-responses", "m", ModelLimits(cost_usd=1e-6), tmp_path / "t.jsonl.gz",
                            run_date=RUN_DATE)
    client = _sdk("openai-responses", sock, clients)
    client.responses.create(model="m", input="x")
    with pytest.raises(openai.RateLimitError):
        client.responses.create(model="m", input="x")
    totals = gateway.close_run("run-a")
    assert totals.cost_usd > 1e-6 and totals.refused == 1


def test_flood_is_refused_past_the_in_flight_cap(gateway: GatewayThread, standin: StandIn, tmp_path: Path,
                                                 events: list) -> None:
    import asyncio

    import aiohttp

    standin.event_delay_s = 0.02
    sock = gateway.open_run("run-a", "openai-chat", "m", ModelLimits(in_flight=4), tmp_path / "t.jsonl.gz")

    async def flood() -> list[int]:
        async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(sock))) as s:
            async def one() -> int:
                async with s.post("http://x/v1/chat/completions", json={
                        "model": "m", "stream": True, "stream_options": {"include_usage": True},
                        "messages": [{"role": "user", "content": "x"}]}) as r:
                    await r.read()
                    return r.status
            return await asyncio.gather(*(one() for _ in range(40)))

    statuses = asyncio.run(flood())
    totals = gateway.close_run("run-a")
    assert statuses.count(200) >= 4 and statuses.count(429) > 0 and set(statuses) <= {200, 429}
    assert totals.refused == statuses.count(429) and totals.ok == statuses.count(200)
    assert all(f["reason"] == "in_flight" for _, _, f in events) and len(events) == totals.refused


def test_paths_outside_the_api_are_never_forwarded(gateway: GatewayThread, tmp_path: Path, clients: list) -> None:
    sock = gateway.open_run("run-a", "openai-chat", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
    http = uds_client(sock)
    clients.append(http)
    assert http.post("/v1/files", content=b"{}").status_code == 404
    assert http.get("/v1/chat/completions").status_code == 405
    assert http.post("/v1/responses", json={}).status_code == 404
    totals = gateway.close_run("run-a")
    assert totals.refused == 3 and totals.forwarded == 0
    assert not (tmp_path / "standin.jsonl").exists() or read_log(tmp_path / "standin.jsonl") == []


def test_provider_errors_mark_the_endpoint_refusing_until_it_answers(gateway: GatewayThread, standin: StandIn,
                                                                     tmp_path: Path, clients: list) -> None:
    sock = gateway.open_run("run-a", "openai-chat", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
    client = _sdk("openai-chat", sock, clients)
    standin.faults.extend([Fault(status=429, retry_after="30"), Fault(status=500), Fault(status=529)])
    for exc in (openai.RateLimitError, openai.InternalServerError, openai.APIStatusError):
        with pytest.raises(exc):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert gateway.refusing("openai-chat")
    assert gateway.health("openai-chat").consecutive_failures == 3
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert not gateway.refusing("openai-chat")
    assert gateway.totals("run-a").last_outcome == "ok"
    totals = gateway.close_run("run-a")
    assert (totals.provider_errors, totals.ok) == (3, 1)
    outcomes = [(c["outcome"], c["response"]["status"]) for c in read_transcript(tmp_path / "t.jsonl.gz")]
    assert outcomes == [("provider_error", 429), ("provider_error", 500), ("provider_error", 529), ("ok", 200)]


def test_timeouts_cut_streams_and_dead_upstreams(upstream_url: str, standin: StandIn, tmp_path: Path,
                                                 clients: list, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.gateway.server import Gateway
    from orchestrator.specs.endpoints import Endpoint

    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    eps = {"slow": Endpoint(name="slow", api="anthropic", base_url=upstream_url, key_env="SBX_TEST_KEY", idle_timeout_s=0.5),
           "dead": Endpoint(name="dead", api="anthropic", base_url="http://127.0.0.1:9", key_env="SBX_TEST_KEY")}
    with GatewayThread(Gateway(eps, socket_root=tmp_path / "s")) as gw:
        sock = gw.open_run("r1", "slow", "m", ModelLimits(), tmp_path / "r1.jsonl.gz")
        dead = gw.open_run("r2", "dead", "m", ModelLimits(), tmp_path / "r2.jsonl.gz")
        http, http_dead = uds_client(sock), uds_client(dead)
        clients.extend([http, http_dead])
        body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
        standin.faults.append(Fault(delay_s=1.5))
        assert http.post("/v1/messages", json=body).status_code == 504
        standin.faults.append(Fault(cut_after=3))
        with http.stream("POST", "/v1/messages", json=body | {"stream": True}) as r:
            assert r.status_code == 200
            with pytest.raises(httpx.HTTPError):  # the stand-in cut the stream mid-body
                r.read()
        assert http_dead.post("/v1/messages", json=body).status_code == 502
        gw.close_run("r1")
        dead_totals = gw.close_run("r2")
    slow = read_transcript(tmp_path / "r1.jsonl.gz")
    assert [c["outcome"] for c in slow] == ["upstream_timeout", "provider_error"]
    # the upstream hung up mid-stream: what arrived is kept, the input billed in message_start counted
    assert "payload is not completed" in slow[1]["error"] and slow[1]["usage"]["output"] == 1
    assert slow[1]["usage"]["input"] > 0 and len(slow[1]["response"]["events"]) == 3
    (down,) = read_transcript(tmp_path / "r2.jsonl.gz")
    assert down["outcome"] == "provider_error" and "connection failed" in down["error"]
    # the run's totals keep the last call's error: a run that ended on it names the cause (issue 24, item 3)
    assert dead_totals.last_outcome == "provider_error" and dead_totals.last_error == down["error"]
    assert "127.0.0.1:9" in dead_totals.last_error
    assert KEY not in json.dumps(slow + [down])


def test_usage_counts_when_the_agent_hangs_up_mid_stream(gateway: GatewayThread, standin: StandIn,
                                                         tmp_path: Path, clients: list) -> None:
    standin.event_delay_s = 0.01
    sock = gateway.open_run("run-a", "anthropic", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
    http = uds_client(sock)
    clients.append(http)
    body = {"model": "m", "max_tokens": 10, "stream": True, "system": "s" * 500,
            "messages": [{"role": "user", "content": "y" * 2000}], "tools": shapes.CLAUDE_TOOLS}
    with http.stream("POST", "/v1/messages", json=body) as r:
        next(r.iter_bytes())
    totals = gateway.close_run("run-a", grace_s=10)
    (call,) = read_transcript(tmp_path / "t.jsonl.gz")
    assert call["usage"] == read_log(tmp_path / "standin.jsonl")[0]["usage"]
    assert "agent disconnected" in call["error"] and totals.usage.output > 1


def test_oversized_body_is_refused_unread(upstream_url: str, tmp_path: Path, clients: list,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.gateway.server import Gateway
    from tests.gateway.conftest import endpoints_for

    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    with GatewayThread(Gateway(endpoints_for(upstream_url), socket_root=tmp_path / "s", max_request_bytes=100_000)) as gw:
        sock = gw.open_run("r", "openai-chat", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
        http = uds_client(sock)
        clients.append(http)
        r = http.post("/v1/chat/completions", content=b"x" * 3_000_000)
        assert r.status_code == 413 and r.headers["connection"] == "close"
        totals = gw.close_run("r")
    (call,) = read_transcript(tmp_path / "t.jsonl.gz")
    # a refused call keeps no body: its size (reading stopped soon after the limit) and hash
    assert call["outcome"] == "refused" and call["request"].get("body") is None
    assert 100_000 < call["request"]["truncated"] < 3_000_000
    assert f"body {call['request']['truncated']} bytes, sha256 " in call["error"]
    assert totals.forwarded == 0


def test_agent_hanging_up_mid_body_is_a_client_error(gateway: GatewayThread, tmp_path: Path) -> None:
    import socket

    sock = gateway.open_run("run-a", "openai-chat", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
    s = socket.socket(socket.AF_UNIX)
    s.connect(str(sock))
    s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 100000\r\n\r\n" + b"{" * 1000)
    s.close()
    totals = gateway.close_run("run-a", grace_s=10)
    (call,) = read_transcript(tmp_path / "t.jsonl.gz")
    assert call["outcome"] == "client_error" and call["error"] and totals.forwarded == 0


def test_unmetered_chat_streams_are_refused(gateway: GatewayThread, tmp_path: Path, clients: list) -> None:
    sock = gateway.open_run("run-a", "openai-chat", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
    client = _sdk("openai-chat", sock, clients)
    with pytest.raises(openai.BadRequestError, match="include_usage"):
        list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True))
    with pytest.raises(openai.BadRequestError):
        list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True,
                                            stream_options={"include_usage": False}))
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True,
                                                 stream_options={"include_usage": True}))
    assert chunks[-1].usage is not None
    totals = gateway.close_run("run-a")
    assert (totals.refused, totals.forwarded, totals.usage_missing) == (2, 1, 0)


def test_background_responses_are_refused(gateway: GatewayThread, tmp_path: Path, clients: list) -> None:
    sock = gateway.open_run("run-a", "openai-responses", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
    client = _sdk("openai-responses", sock, clients)
    with pytest.raises(openai.BadRequestError, match="background"):
        client.responses.create(model="m", input="x", background=True)
    assert client.responses.create(model="m", input="x", background=False).usage.input_tokens > 0
    totals = gateway.close_run("run-a")
    assert (totals.refused, totals.forwarded) == (1, 1)
