"""Round-3 attacks on the model gateway from inside a real sandbox (issue 20, items 1-4), one run: the attack
agent (tests/run/attacks/round3_gateway.py) goes through the forwarder like any CLI. The in-process tests
(tests/gateway/test_smuggling.py, test_bounds.py) cover every form; this one shows the forms reach the
gateway from a sandbox unchanged and what each gains there.

Before the fix (issue 20, in a sandbox): smuggled paths reached `/admin/keys` and the batch API with the real
key; 5 `\\u0073tream` calls came back 200 uncounted (6,240 tokens counted, 10,255 in the stand-in's log,
limit 2,000); 8 of 16 parallel calls went through; 185 refused calls wrote an 800,760,726-byte transcript
and cost the host 67 CPU-s."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from orchestrator.agents import command_agent
from orchestrator.gateway.server import MAX_REFUSALS_PER_RUN
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.specs import load_task
from orchestrator.specs.budget import Budget
from tests.run.conftest import HOSTILE_BUDGET
from tests.run.standin_setup import MODEL, REAL_KEY, standin_gateway, truth

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ATTACK = Path(__file__).parent / "attacks" / "round3_gateway.py"
TOKEN_LIMIT = 2_000
#: the forwarder holds at most this many connections to the gateway; each may carry one call after the cap
FORWARDER_CONNECTIONS = 64


def _gateway_thread_cpu() -> float:
    """CPU seconds of the gateway's event-loop thread in this process (where every refusal is handled)."""
    (native,) = [t.native_id for t in threading.enumerate() if t.name == "sbx-gateway"]
    (t,) = [t for t in psutil.Process().threads() if t.id == native]
    return t.user_time + t.system_time


@pytest.fixture(scope="module")
def attacked(docker_client, built_images, tmp_path_factory: pytest.TempPathFactory,
             small_flight_data: Path) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("round3")
    home = Home(tmp / "sbx")
    budget = Budget(**{**HOSTILE_BUDGET, "cpu_seconds": 60, "hard_stop_cpu_seconds": 120, "wall_clock_minutes": 5,
                       "model_tokens": TOKEN_LIMIT})
    with standin_gateway(tmp / "model") as setup, Ledger(home.ledger_path) as ledger:
        req = RunRequest(task=load_task("flight-delays"), budget=budget, agent=command_agent(ATTACK),
                         data_dir=small_flight_data, model=MODEL, endpoint="standin-chat", datasets=())
        lifecycle = RunLifecycle(home, ledger, docker_client, gateway=setup.host)
        run_id = lifecycle.plan(req)
        cpu0, t0 = _gateway_thread_cpu(), time.monotonic()
        record = lifecycle.run(req, run_id)
        gateway_cpu, wall = _gateway_thread_cpu() - cpu0, time.monotonic() - t0
        result = {
            "record": record, "usage": ledger.usage.of_run(run_id), "calls": setup.calls(run_id),
            "seen": list(setup.standin.requests), "gateway_cpu_s": gateway_cpu, "wall_s": wall,
            "events": {k: [e.detail for e in ledger.events(run_id, k)]
                       for k in ("model.refused", "model.access_ended", "model.transcript_capped")},
            "transcript_bytes": (home.run_dir(run_id) / "transcript.jsonl.gz").stat().st_size,
            "agent_log": (home.run_dir(run_id) / "agent.log").read_text(errors="replace"),
            "found": json.loads((home.delivered_dir(run_id) / "workspace" / "round3.json").read_text()),
        }
    print("\nround-3 gateway attacks, in a sandbox:", json.dumps(
        {k: result[k] for k in ("gateway_cpu_s", "wall_s", "transcript_bytes", "found")}
        | {"refused": result["usage"].refused, "ok": result["usage"].ok,
           "tokens": result["usage"].input_tokens + result["usage"].output_tokens,
           "agent_cpu_metered_s": record.cpu_seconds_metered, "container_cpu_s": record.cpu_seconds_container},
        default=str))
    return result


def test_smuggled_targets_from_a_sandbox_reach_nothing(attacked: dict[str, Any]) -> None:
    found = attacked["found"]
    assert attacked["record"].status == "delivered", attacked["agent_log"][-3000:]
    assert found["first"] == 200
    assert set(found["smuggle"].values()) == {404}, found["smuggle"]
    # the upstream saw the one allowed target, and the key only there
    key = hashlib.sha256(f"Bearer {REAL_KEY}".encode()).hexdigest()
    assert {(s["method"], s["target"]) for s in attacked["seen"]} == {("POST", "/v1/chat/completions")}
    assert all(s["credentials"] == {"Authorization": key} for s in attacked["seen"])


def test_every_call_that_went_through_was_counted_within_the_bound(attacked: dict[str, Any]) -> None:
    found, usage, calls = attacked["found"], attacked["usage"], attacked["calls"]
    assert set(found["unmetered"]) == {400}, found["unmetered"]
    assert set(found["race"]) <= {"200", "429"} and found["race"].get("429", 0) >= 1, found["race"]
    # counted = the stand-in's own log, call for call: nothing went through unmetered
    t = truth(calls)
    assert (usage.input_tokens, usage.output_tokens) == (t["input"], t["output"])
    assert usage.usage_missing == 0 and usage.ok == len(calls)
    # the documented bound: the limit plus the largest single reservation (a race call's body and max_tokens)
    assert usage.input_tokens + usage.output_tokens <= TOKEN_LIMIT + found["race_body_bytes"] + 64


def test_a_refusal_flood_costs_the_host_a_bounded_amount(attacked: dict[str, Any]) -> None:
    found, usage, events = attacked["found"], attacked["usage"], attacked["events"]
    flood = found["flood"]
    # refusals stop at the cap (plus one per connection open when it was reached); then the socket is gone
    # and the forwarder answers 502, or resets the connection, without the gateway reading anything. A call
    # may also outlast the attacker's own 60 s socket timeout (8 x 4 MiB bodies on a loaded 2-core host:
    # CI saw 2 of 293): that is the client giving up, not the gateway answering, so it is allowed; what the
    # host pays is what the checks below bound: the refusal count and the transcript's size.
    assert MAX_REFUSALS_PER_RUN <= usage.refused <= MAX_REFUSALS_PER_RUN + FORWARDER_CONNECTIONS
    assert set(flood) <= {"429", "502", "ConnectionResetError", "BrokenPipeError", "TimeoutError"}, flood
    assert sum(n for k, n in flood.items() if k != "429") >= 20, flood
    assert [e["reason"] for e in events["model.access_ended"]] == ["refusals"]
    # no refused body is kept: the transcript is a few dozen bytes a call, not 4 MiB
    assert attacked["transcript_bytes"] < 200 * 1024, attacked["transcript_bytes"]
    assert events["model.transcript_capped"] == []
