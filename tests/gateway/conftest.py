"""A stand-in upstream, a gateway in front of it (on a background loop), SDK clients on a run's socket."""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the HTTP client the anthropic and openai SDKs ship with
import pytest

from orchestrator.gateway.server import Gateway
from orchestrator.gateway.thread import GatewayThread
from orchestrator.model import Scenario, StandIn, serve_in_thread
from orchestrator.specs.endpoints import Endpoint, Price, RateCard, RateCards
from tests.model.conftest import SCENARIO

KEY = "sk-test-REALKEY-0123456789abcdef"
PRICE = Price(input=3.0, cached_input=0.3, cache_write=3.75, output=15.0)
RUN_DATE = dt.date(2026, 11, 30)


@pytest.fixture
def standin(tmp_path: Path) -> StandIn:
    return StandIn(Scenario.model_validate(SCENARIO), log_path=tmp_path / "standin.jsonl", seed=0)


@pytest.fixture
def upstream_url(standin: StandIn) -> Iterator[str]:
    with serve_in_thread(standin) as url:
        yield url


@pytest.fixture
def ratecards() -> RateCards:
    old = RateCard(date=dt.date(2026, 1, 1), models={"m": Price(input=100, output=100)})
    current = RateCard(date=dt.date(2026, 11, 1), models={"m": PRICE})
    return RateCards([(Path("a.yaml"), old), (Path("b.yaml"), current)])


def endpoints_for(url: str, **extra: Any) -> dict[str, Endpoint]:
    return {api: Endpoint(name=api, api=api, base_url=url, key_env="SBX_TEST_KEY", run_headers=True, **extra)
            for api in ("anthropic", "openai-chat", "openai-responses")}


@pytest.fixture
def events() -> list[tuple[str, str, dict]]:
    return []


@pytest.fixture
def gateway(upstream_url: str, tmp_path: Path, ratecards: RateCards, events: list,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[GatewayThread]:
    monkeypatch.setenv("SBX_TEST_KEY", KEY)
    # sockets in a short folder of their own: a unix socket's path has 107 bytes at most, and a long test
    # name under a parallel worker's tmp_path (.../popen-gw1/test_..._end0/) leaves too few of them
    with tempfile.TemporaryDirectory(prefix="sbx-gw-") as sockets:
        gw = Gateway(endpoints_for(upstream_url), socket_root=Path(sockets), ratecards=ratecards,
                     on_event=lambda run, kind, fields: events.append((run, kind, fields)))
        with GatewayThread(gw) as thread:
            yield thread


def uds_client(sock: Path) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://sandbox", timeout=30)


@pytest.fixture
def clients() -> Iterator[list]:
    """Closes every client a test made (httpx and SDK clients hold sockets)."""
    made: list = []
    yield made
    for c in made:
        c.close()
