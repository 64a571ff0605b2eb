"""A hostile agent with a model endpoint, in a real sandbox, through the whole run: it gains nothing.

The agent (tests/run/agents/model_hostile.py) floods the forwarder, spends ten times its token limit, goes
after the forwarder and around it, looks for other runs' sockets, a network and the real key. Meanwhile
another run on the same gateway keeps calling its own socket and must not notice."""

from __future__ import annotations

import datetime as dt
import http.client
import json
import socket
import threading
from pathlib import Path

import pytest

from orchestrator.agents import command_agent
from orchestrator.gateway.limits import ModelLimits
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.model import Fault
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.specs import load_task
from orchestrator.specs.budget import Budget
from tests.run.conftest import HOSTILE_BUDGET
from tests.run.standin_setup import MODEL, REAL_KEY, standin_gateway, truth

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENT = Path(__file__).parent / "agents" / "model_hostile.py"
TOKEN_LIMIT = 20_000


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("gateway", timeout=30)
        self.path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.path)


def _neighbour(sock: Path, stop: threading.Event, statuses: list[int]) -> None:
    """Another run on the same gateway: one small call every 0.3 s until told to stop."""
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "neighbour"}]})
    while not stop.is_set():
        conn = _UnixHTTP(sock)
        try:
            conn.request("POST", "/v1/chat/completions", body=body, headers={"content-type": "application/json"})
            statuses.append(conn.getresponse().status)
        except OSError:
            statuses.append(-1)
        finally:
            conn.close()
        stop.wait(0.3)


def test_a_hostile_agent_gains_nothing_from_the_model_path(docker_client, built_images, home: Home, tmp_path: Path,
                                                          small_flight_data: Path) -> None:
    budget = Budget(**{**HOSTILE_BUDGET, "cpu_seconds": 60, "hard_stop_cpu_seconds": 120, "wall_clock_minutes": 5,
                       "model_tokens": TOKEN_LIMIT})
    with standin_gateway(tmp_path / "model") as setup, Ledger(home.ledger_path) as ledger:
        # the upstream is slow for the first calls, so the flood piles up in the gateway
        setup.standin.faults.extend(Fault(delay_s=2.0) for _ in range(30))
        other = tmp_path / "other-run"
        other.mkdir()
        other_sock = setup.host.open_run("neighbour-run", "standin-chat", MODEL, ModelLimits(), tmp_path / "n.jsonl.gz",
                                         socket_path=other / "model.sock", seed=1, run_date=dt.date.today(),
                                         on_event=lambda *_: None)
        stop, neighbour = threading.Event(), []
        thread = threading.Thread(target=_neighbour, args=(other_sock, stop, neighbour), daemon=True)
        thread.start()
        req = RunRequest(task=load_task("flight-delays"), budget=budget, agent=command_agent(AGENT),
                         data_dir=small_flight_data, model=MODEL, endpoint="standin-chat", datasets=(),
                         agent_options={"token_limit": TOKEN_LIMIT})
        lifecycle = RunLifecycle(home, ledger, docker_client, gateway=setup.host)
        run_id = lifecycle.plan(req)
        record = lifecycle.run(req, run_id)
        stop.set()
        thread.join(10)
        other_totals = setup.host.close_run("neighbour-run")
        usage = ledger.usage.of_run(run_id)
        refusals = [e.detail for e in ledger.events(run_id, "model.refused")]
        capped = ledger.events(run_id, "model.events_capped")
        calls = setup.calls(run_id)
    workspace = home.delivered_dir(run_id) / "workspace"
    agent_log = (home.run_dir(run_id) / "agent.log").read_text(errors="replace")
    assert record.status == "delivered", (record.failure_reason, agent_log[-3000:])
    found = json.loads((workspace / "hostile.json").read_text())

    # the flood: at most 16 calls of the run in flight; the rest refused with 429, each an event
    assert found["flood"].get("200", 0) <= 16 and found["flood"].get("429", 0) >= 20, found["flood"]
    in_flight = [r for r in refusals if r["reason"] == "in_flight"]
    assert len(in_flight) == found["flood"]["429"] and all(r["status"] == 429 for r in in_flight)
    # ten times the token limit: refused once the limit was crossed, each an event (events stop at 100 per
    # run, then one model.events_capped); what got through stays within the limit plus the call that crossed it
    assert found["tokens"].get("429", 0) >= 80, found["tokens"]
    assert usage is not None and usage.refused == found["flood"]["429"] + found["tokens"]["429"]
    assert len(refusals) == min(usage.refused, 100) and len(capped) == (usage.refused > 100)
    assert {r["reason"] for r in refusals} == {"in_flight", "model_tokens"}
    biggest = max(c["usage"]["input"] + c["usage"]["output"] for c in calls)
    assert usage.input_tokens + usage.output_tokens <= TOKEN_LIMIT + biggest
    # the ledger's count is still the stand-in's own (refused calls never reached it), and the forged
    # x-sbx-run-id was replaced: every call the stand-in saw carried this run's id
    t = truth(calls)
    assert (usage.input_tokens, usage.output_tokens) == (t["input"], t["output"])
    assert usage.ok == len(calls) and not [c for c in setup.calls("someone-else")]

    # the forwarder: not signalled, its /proc closed, its port held, the socket unreachable around it
    assert found["forwarder_pids"], found
    assert all(s.endswith("EPERM") for s in found["signals"]), found["signals"]
    assert all(not p.endswith(" read") for p in found["proc"]), found["proc"]
    assert found["bind_port"] == "EADDRINUSE"
    assert found["around"]["/run/sbx/model.sock"] == "EACCES", found["around"]
    assert found["first"] == 200 and found["after_attacks"] == 200
    # no other run's socket is visible. Besides this run's folder, /proc/net/unix names this run's own gateway
    # socket by its host path (the kernel puts the gateway's end of the forwarder's connection in the
    # sandbox's network namespace, with the listener's address); nothing exists at that path in the sandbox
    others = {p: v for p, v in found["sockets"].items() if not p.startswith("/run/sbx/")}
    assert all(p.endswith("/model.sock") and v == "ENOENT" for p, v in others.items()), found["sockets"]
    assert str(other_sock) not in json.dumps(found)
    # no way off the box
    net = found["network"]
    assert net["dns"] != "resolved" and not net["docker_socket"]
    assert not [k for k, v in net.items() if v == "connected"], net
    # the other run went on undisturbed
    assert neighbour and set(neighbour) == {200}, neighbour
    assert other_totals.ok == len(neighbour) and other_totals.refused == 0
    # the real key is nowhere the agent could look: its environment, /proc, files, responses
    dump = (workspace / "hostile-dump.txt").read_text(errors="replace")
    assert len(dump) > 10_000 and "sbx-dummy-key" in dump
    assert REAL_KEY not in dump and REAL_KEY not in agent_log
