"""Round-3 attacks on what the gateway counts and what a run costs the host (issue 20, items 2-4), in-process:
parallel calls against the token and cost limits, a call that comes back without usage, a flood of refused
calls, a transcript past its byte cap. Each test asserts the documented bound, which holds however the calls
interleave.

Before the fix: 16 parallel calls counted 16,480 tokens against a limit of 50 and $0.054 against $0.001; 185
refused 4 MiB calls wrote 800 MB of transcript; 5 streamed calls without usage went through uncounted."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
from pathlib import Path

import aiohttp
import pytest

from orchestrator.gateway import ModelLimits, read_transcript
from orchestrator.gateway.server import Gateway
from orchestrator.gateway.thread import GatewayThread
from orchestrator.model import StandIn, log_totals, read_log
from orchestrator.specs.endpoints import Endpoint
from tests.gateway.conftest import KEY, PRICE, RUN_DATE, endpoints_for
from tests.gateway.upstream import logging_upstream


async def _parallel(sock: Path, bodies: list[dict], path: str = "/v1/chat/completions") -> list[int]:
    """All `bodies` sent at once on their own connections; their statuses."""
    async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(sock), limit=0)) as s:
        async def one(body: dict) -> int:
            async with s.post("http://sandbox" + path, json=body) as r:
                await r.read()
                return r.status
        return await asyncio.gather(*(one(b) for b in bodies))


def _chat(i: int, max_tokens: int | None = 64) -> dict:
    body: dict = {"model": "m", "stream": True, "stream_options": {"include_usage": True},
                  "messages": [{"role": "user", "content": f"call {i} " + "x" * 400}]}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


@pytest.mark.parametrize(("limits", "max_tokens"), [
    (ModelLimits(tokens=50, in_flight=64), 64),          # the case: 16,480 counted against 50
    (ModelLimits(tokens=3_000, in_flight=64), 64),       # several calls fit
    (ModelLimits(tokens=3_000, in_flight=64), None),     # no max_tokens: the endpoint cap is reserved
    (ModelLimits(cost_usd=0.001, in_flight=64), 64),     # the issue's $0.054 against $0.001
    (ModelLimits(cost_usd=0.01, in_flight=64), 8),       # max_tokens under what the model says: over its reservation
])
def test_64_parallel_calls_end_within_the_documented_bound(gateway: GatewayThread, standin: StandIn, tmp_path: Path,
                                                           limits: ModelLimits, max_tokens: int | None) -> None:
    standin.event_delay_s = 0.01  # the calls overlap: each stream takes a while
    sock = gateway.open_run("race", "openai-chat", "m", limits, tmp_path / "t.jsonl.gz", run_date=RUN_DATE)
    statuses = asyncio.run(_parallel(sock, [_chat(i, max_tokens) for i in range(64)]))
    t = gateway.close_run("race")
    log = read_log(tmp_path / "standin.jsonl")
    assert set(statuses) <= {200, 429} and statuses.count(200) == t.ok == len(log) >= 1
    # every call that went through was counted, exactly as the stand-in reports it
    assert t.usage.as_dict() == log_totals(log, "race") and t.usage_missing == 0
    if limits.tokens is not None:
        assert t.usage.tokens <= limits.tokens + t.max_reserved_tokens + t.over_reservation_tokens
    if limits.cost_usd is not None:
        assert t.cost_usd <= limits.cost_usd + t.max_reserved_cost_usd + t.over_reservation_cost_usd + 1e-12
    if max_tokens == 64:  # the stand-in never says more than 64 tokens here: nothing ran past its reservation
        assert t.over_reservation_tokens == 0
        if limits.tokens == 50:
            assert t.usage.tokens <= 50 + t.max_reserved_tokens and t.ok == 1


def test_parallel_big_calls_parsed_off_the_loop_are_still_reserved_one_at_a_time(
        gateway: GatewayThread, standin: StandIn, tmp_path: Path) -> None:
    # bodies past the inline-parse size are parsed in a thread: the limits are checked again after that await
    sock = gateway.open_run("race", "openai-chat", "m", ModelLimits(tokens=50, in_flight=64), tmp_path / "t.jsonl.gz")
    body = _chat(0) | {"messages": [{"role": "user", "content": "y" * 600_000}]}
    statuses = asyncio.run(_parallel(sock, [body] * 16))
    t = gateway.close_run("race")
    # whichever call got in first, it alone went: until it settled its reservation covered the limit, and
    # once it had settled the limit was spent
    assert statuses.count(200) == t.ok == 1 and statuses.count(429) == 15
    assert t.usage.as_dict() == log_totals(read_log(tmp_path / "standin.jsonl"), "race")


def test_a_call_that_comes_back_without_usage_ends_the_runs_model_access(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    events: list = []
    with logging_upstream() as (up, url):
        up.answer = b'{"id": "x", "choices": []}'  # an answer with no usage: a mode the gateway cannot meter
        eps = {"e": Endpoint(name="e", api="anthropic", base_url=url, key_env="SBX_TEST_KEY")}
        with GatewayThread(Gateway(eps, socket_root=tmp_path / "s", on_event=lambda *e: events.append(e))) as gw:
            sock = gw.open_run("r", "e", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
            body = {"model": "m", "max_tokens": 5, "messages": []}
            # token counting is free: an answer without usage is expected there
            counted = asyncio.run(_parallel(sock, [body] * 2, "/v1/messages/count_tokens"))
            statuses = [asyncio.run(_parallel(sock, [body], "/v1/messages"))[0] for _ in range(5)]
            t = gw.close_run("r")
    assert counted == [200, 200] and statuses == [200, 400, 400, 400, 400]
    assert len(up.seen) == 3 and t.usage_missing == 1 and t.access_ended == "usage_missing"
    ended = [f for _, kind, f in events if kind == "model.access_ended"]
    assert len(ended) == 1 and ended[0]["reason"] == "usage_missing"
    assert [f["reason"] for _, kind, f in events if kind == "model.refused"] == ["usage_missing"] * 4


def test_a_refusal_flood_keeps_no_bodies_and_closes_the_socket(upstream_url: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    events: list = []
    gw = Gateway(endpoints_for(upstream_url), socket_root=tmp_path / "s", max_refusals=40,
                 on_event=lambda *e: events.append(e))
    big = {"model": "m", "messages": [{"role": "user", "content": os.urandom(96 * 1024).hex()}]}  # 192 KiB
    with GatewayThread(gw) as thread:
        sock = thread.open_run("r", "openai-chat", "m", ModelLimits(calls=0), tmp_path / "t.jsonl.gz")
        statuses = []
        for _ in range(6):  # 60 calls in waves of 10: the socket closes at the 40th refusal
            try:
                statuses += asyncio.run(_parallel(sock, [big] * 10))
            except (aiohttp.ClientError, OSError):
                statuses.append(-1)
        t = thread.close_run("r")
    assert statuses[:40] == [429] * 40 and -1 in statuses and t.refused == 40 and t.forwarded == 0
    assert t.access_ended == "refusals" and not sock.exists()
    assert [f["reason"] for _, k, f in events if k == "model.access_ended"] == ["refusals"]
    calls = read_transcript(tmp_path / "t.jsonl.gz")
    assert len(calls) == 40 and all(c["request"].get("body") is None for c in calls)
    assert all(c["request"]["truncated"] == len(json.dumps(big)) for c in calls)
    # 40 x 192 KiB sent; the transcript keeps well under a kilobyte a call
    assert (tmp_path / "t.jsonl.gz").stat().st_size < 40 * 1024


def test_the_transcript_stops_at_its_byte_cap_and_says_so(upstream_url: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    events: list = []
    cap = 300_000
    gw = Gateway(endpoints_for(upstream_url), socket_root=tmp_path / "s", max_transcript_bytes=cap,
                 on_event=lambda *e: events.append(e))
    with GatewayThread(gw) as thread:
        sock = thread.open_run("r", "openai-chat", "m", ModelLimits(), tmp_path / "t.jsonl.gz")
        for _ in range(8):  # incompressible 100 KB bodies, forwarded and answered
            body = {"model": "m", "messages": [{"role": "user", "content": os.urandom(50_000).hex()}]}
            assert asyncio.run(_parallel(sock, [body])) == [200]
        t = thread.close_run("r")
    path = tmp_path / "t.jsonl.gz"
    assert path.stat().st_size <= cap
    kept = len(gzip.decompress(path.read_bytes()).splitlines())
    assert t.transcript_dropped == 8 - kept > 0 and t.ok == 8
    capped = [f for _, k, f in events if k == "model.transcript_capped"]
    assert len(capped) == 1 and capped[0]["max_bytes"] == cap and capped[0]["lines"] == kept


def test_a_reservation_is_priced_at_the_card(gateway: GatewayThread, tmp_path: Path) -> None:
    sock = gateway.open_run("r", "anthropic", "m", ModelLimits(), tmp_path / "t.jsonl.gz", run_date=RUN_DATE)
    body = {"model": "m", "max_tokens": 1000, "messages": [{"role": "user", "content": "hi"}]}
    assert asyncio.run(_parallel(sock, [body], "/v1/messages")) == [200]
    t = gateway.close_run("r")
    size = len(json.dumps(body))
    assert t.max_reserved_tokens == size + 1000
    in_price = max(PRICE.input, PRICE.cached_input or 0, PRICE.cache_write or 0)
    assert t.max_reserved_cost_usd == pytest.approx((size * in_price + 1000 * PRICE.output) / 1e6)
