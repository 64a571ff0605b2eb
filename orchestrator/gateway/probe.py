"""One tiny call to an endpoint through the gateway (the same path an agent's calls take): `sbx endpoints
check`, and a study's way to see whether a refusing endpoint answers again."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from orchestrator.gateway.limits import ModelLimits
from orchestrator.gateway.server import Gateway
from orchestrator.gateway.transcript import read_transcript

PROMPT = "Reply with the word OK."


def tiny_request(api: str, model: str) -> tuple[str, dict[str, Any], dict[str, str]]:
    """(path, JSON body, extra headers) of the smallest useful call in `api`."""
    if api == "anthropic":
        return ("/v1/messages", {"model": model, "max_tokens": 16, "messages": [{"role": "user", "content": PROMPT}]},
                {"anthropic-version": "2023-06-01"})
    if api == "openai-chat":
        return ("/v1/chat/completions", {"model": model, "max_completion_tokens": 16,
                                         "messages": [{"role": "user", "content": PROMPT}]}, {})
    return "/v1/responses", {"model": model, "max_output_tokens": 16, "input": PROMPT}, {}


def answer_text(api: str, body: Any) -> str | None:
    """The text of a non-streamed reply, or None."""
    try:
        if api == "anthropic":
            return "".join(b.get("text", "") for b in body["content"] if b.get("type") == "text")
        if api == "openai-chat":
            return body["choices"][0]["message"].get("content")
        return "".join(c.get("text", "") for o in body["output"] if o.get("type") == "message" for c in o["content"])
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


@dataclass
class ProbeResult:
    endpoint: str
    model: str
    status: int | None
    outcome: str
    text: str | None
    usage: dict[str, int] | None
    cost_usd: float | None
    seconds: float
    error: str | None


async def probe(gateway: Gateway, endpoint: str, model: str, transcript_path: Path,
                run_id: str | None = None) -> ProbeResult:
    """Make one tiny call on `endpoint` through `gateway`; what came back, and what it cost."""
    api = gateway.endpoints[endpoint].api
    run_id = run_id or f"probe-{os.getpid()}-{time.monotonic_ns() % 10**9}"
    sock = await gateway.open_run(run_id, endpoint, model, ModelLimits(calls=1), transcript_path)
    path, body, headers = tiny_request(api, model)
    start = time.perf_counter()
    try:
        async with aiohttp.ClientSession(connector=aiohttp.UnixConnector(path=str(sock))) as session:
            async with session.post("http://sandbox" + path, json=body,
                                    headers={"authorization": "Bearer dummy", **headers}) as r:
                raw = await r.read()
    finally:
        await gateway.close_run(run_id)
    (call,) = read_transcript(transcript_path)[-1:]
    try:
        text = answer_text(api, json.loads(raw)) if call["outcome"] == "ok" else None
    except ValueError:
        text = None
    return ProbeResult(endpoint, model, call["response"]["status"], call["outcome"], text, call["usage"],
                       call["cost_usd"], time.perf_counter() - start,
                       call["error"] or (None if call["outcome"] == "ok" else raw[:300].decode("utf-8", "replace")))
