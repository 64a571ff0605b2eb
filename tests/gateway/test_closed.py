"""A run's closed model path (gateway/closed.py) answers as the run's gateway answers a call past the run's
model budget, byte for byte but the date, and reaches no upstream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.gateway.closed import ClosedGateway, ClosedRun
from orchestrator.gateway.limits import ModelLimits
from orchestrator.gateway.thread import GatewayThread
from orchestrator.model import StandIn, read_log
from orchestrator.specs.usage import TokenUsage
from tests.gateway.conftest import RUN_DATE, uds_client

CALLS = [
    ("openai-chat", "POST", "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
    ("openai-chat", "POST", "/v1/chat/completions", {"model": "m", "stream": True, "messages": []}),  # unmetered
    ("openai-chat", "GET", "/v1/models", None),
    ("openai-chat", "POST", "/v1/embeddings", {"input": "x"}),
    ("anthropic", "POST", "/v1/messages", {"model": "m", "max_tokens": 5, "messages": []}),
    ("openai-responses", "POST", "/v1/responses", {"model": "m", "input": "hi"}),
]


def _answer(sock: Path, method: str, path: str, body: dict | None) -> tuple[int, dict[str, str], bytes]:
    with uds_client(sock) as client:
        r = client.request(method, path, content=json.dumps(body).encode() if body is not None else None,
                           headers={"content-type": "application/json"})
        return r.status_code, {k: v for k, v in r.headers.items() if k != "date"}, r.content


@pytest.mark.parametrize(("api", "method", "path", "body"), CALLS)
def test_the_closed_path_answers_as_the_gateway_past_a_spent_limit(
        api: str, method: str, path: str, body: dict | None, gateway: GatewayThread, standin: StandIn,
        tmp_path: Path) -> None:
    limits = ModelLimits(calls=0)
    real = gateway.open_run("r-real", api, "m", limits, tmp_path / "t.jsonl.gz", run_date=RUN_DATE)
    closed = ClosedRun.spent(api, limits, forwarded=0, usage=TokenUsage(), cost=0.0)
    with ClosedGateway(tmp_path / "model.sock", closed) as server:
        mine = _answer(server.path, method, path, body)
        assert server.calls == 1
    theirs = _answer(real, method, path, body)
    gateway.close_run("r-real")
    assert mine == theirs
    assert mine[0] in (400, 404, 405, 429)
    assert read_log(tmp_path / "standin.jsonl") == [] if (tmp_path / "standin.jsonl").exists() else True
    assert not (tmp_path / "model.sock").exists()


def test_the_refusal_names_the_first_spent_limit_or_the_calls_let_through() -> None:
    tokens = ClosedRun.spent("openai-chat", ModelLimits(calls=10, tokens=100), forwarded=4, usage=TokenUsage(input=90, output=20),
                             cost=0.0)
    assert (tokens.reason, tokens.message) == ("model_tokens", "sbx: this run's model_tokens limit (100) is spent (110 used)")
    calls = ClosedRun.spent("anthropic", ModelLimits(calls=3), forwarded=3, usage=TokenUsage(), cost=0.0)
    assert calls.message == "sbx: this run's model_calls limit (3) is spent"
    unlimited = ClosedRun.spent("anthropic", ModelLimits(), forwarded=7, usage=TokenUsage(input=5), cost=1.0)
    assert (unlimited.reason, unlimited.message) == ("model_calls", "sbx: this run's model_calls limit (7) is spent")
