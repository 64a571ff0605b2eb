"""The host's gateway as runs use it (run/gateway_host.py), against the stand-in model, with no container:
a run's socket where the run says, its events routed to it before its socket closes, the prepare step's
config checks, and endpoint health with a probe."""

from __future__ import annotations

import datetime as dt
import http.client
import json
import socket
from pathlib import Path

import pytest

from orchestrator.failures import ConfigError
from orchestrator.gateway.limits import ModelLimits
from orchestrator.model import Fault
from orchestrator.run.gateway_host import GatewayHost, check_model_target
from orchestrator.specs.endpoints import load_endpoints, load_ratecards
from tests.run.standin_setup import KEY_ENV, MODEL, PRICE, standin_gateway, truth, write_model_files

TODAY = dt.date(2026, 11, 30)


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("gateway", timeout=30)
        self.unix_path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.unix_path)


def _chat(sock: Path, text: str) -> tuple[int, dict]:
    conn = _UnixHTTP(sock)
    try:
        conn.request("POST", "/v1/chat/completions", headers={"content-type": "application/json"},
                     body=json.dumps({"model": MODEL, "messages": [{"role": "user", "content": text}]}))
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_a_run_is_served_on_its_own_socket_and_its_events_reach_it(tmp_path: Path) -> None:
    with standin_gateway(tmp_path / "model") as setup:
        folder = tmp_path / "run-sockets"
        folder.mkdir()
        (folder / "experiments.sock").write_text("the run's other files stay")
        events: list[tuple[str, dict]] = []
        sock = setup.host.open_run("run-a", "standin-chat", MODEL, ModelLimits(calls=2), tmp_path / "a.jsonl.gz",
                                   socket_path=folder / "model.sock", seed=3, run_date=TODAY,
                                   on_event=lambda kind, fields: events.append((kind, fields)))
        assert sock == folder / "model.sock" and sock.is_socket()
        statuses = [_chat(sock, f"call {i}")[0] for i in range(3)]
        totals = setup.host.close_run("run-a")
        calls = setup.calls("run-a")
    assert statuses == [200, 200, 429]
    # the refusal's event was written before close_run returned
    assert events == [("model.refused", {"reason": "model_calls", "message": "sbx: this run's model_calls limit (2) is "
                                         "spent", "index": 2, "status": 429})]
    assert (totals.calls, totals.ok, totals.refused) == (3, 2, 1)
    assert totals.usage.as_dict() == truth(calls) and [c["seed"] for c in calls] == [3, 3]
    assert totals.cost_usd == pytest.approx(sum(PRICE.cost(totals.usage.__class__(**c["usage"])) for c in calls))
    # only the socket goes; the run's folder and its other files are the run's to remove
    assert not sock.exists() and (folder / "experiments.sock").read_text() == "the run's other files stay"


def test_two_runs_never_share_a_socket_or_limits(tmp_path: Path) -> None:
    with standin_gateway(tmp_path / "model") as setup:
        socks = {}
        for name in ("one", "two"):
            (tmp_path / name).mkdir()
            socks[name] = setup.host.open_run(name, "standin-chat", MODEL, ModelLimits(calls=1), tmp_path / f"{name}.gz",
                                              socket_path=tmp_path / name / "model.sock", seed=None, run_date=TODAY,
                                              on_event=lambda *_: None)
        assert [_chat(socks["one"], "x")[0], _chat(socks["one"], "y")[0], _chat(socks["two"], "z")[0]] == [200, 429, 200]
        one, two = setup.host.close_run("one"), setup.host.close_run("two")
        assert [c["run_id"] for c in setup.calls("one")] == ["one"] and [c["run_id"] for c in setup.calls("two")] == ["two"]
    assert (one.ok, one.refused, two.ok, two.refused) == (1, 1, 1, 0)


def test_the_prepare_step_checks_name_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoints_file, cards_dir = write_model_files(tmp_path, "http://127.0.0.1:9")
    endpoints, cards = load_endpoints(endpoints_file), load_ratecards(cards_dir)
    monkeypatch.setenv(KEY_ENV, "sk-some-key")

    def check(name: str = "standin-chat", model: str = MODEL, on: dt.date = TODAY, **kw):
        return check_model_target(endpoints, cards, name, model, on, endpoints_file=endpoints_file,
                                  ratecards_dir=cards_dir, **kw)

    found = check()
    assert (found.endpoint.api, found.rate_card_date, found.price) == ("openai-chat", dt.date(2000, 1, 1), PRICE)
    with pytest.raises(ConfigError, match=f"no endpoint named 'nope'; known: standin-anthropic, standin-chat, "
                                          f"standin-responses in {endpoints_file}"):
        check("nope")
    with pytest.raises(ConfigError, match="does not list model 'gpt-9'"):
        check(model="gpt-9")
    with pytest.raises(ConfigError, match=r"no rate card in .* prices model 'sbx-standin' on 1999-12-31: add it"):
        check(on=dt.date(1999, 12, 31))
    with pytest.raises(ConfigError, match="no rate cards: a run's cost needs a card"):
        check_model_target(endpoints, None, "standin-chat", MODEL, TODAY)
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ConfigError, match=f"environment variable {KEY_ENV} is not set or empty"):
        check()
    with pytest.raises(ConfigError, match="no endpoints file"):
        GatewayHost.from_files(tmp_path / "missing.yaml", cards_dir)


def test_an_endpoint_that_keeps_failing_refuses_until_a_probe_answers(tmp_path: Path) -> None:
    with standin_gateway(tmp_path / "model") as setup:
        (tmp_path / "r").mkdir()
        sock = setup.host.open_run("r", "standin-chat", MODEL, ModelLimits(), tmp_path / "r.gz",
                                   socket_path=tmp_path / "r" / "model.sock", seed=0, run_date=TODAY,
                                   on_event=lambda *_: None)
        setup.standin.faults.extend([Fault(status=529), Fault(status=503), Fault(status=429, retry_after="30")])
        statuses = [_chat(sock, str(i))[0] for i in range(3)]
        refusing = setup.host.refusing("standin-chat")
        health = setup.host.health("standin-chat")
        until = health.retry_after_until
        probe = setup.host.probe("standin-chat", MODEL, tmp_path / "probe.jsonl.gz")
        after = setup.host.refusing("standin-chat")
        setup.host.close_run("r")
    assert statuses == [529, 503, 429] and refusing and health.consecutive_failures == 0  # reset by the probe
    assert until is not None
    assert probe.outcome == "ok" and probe.status == 200 and not after
