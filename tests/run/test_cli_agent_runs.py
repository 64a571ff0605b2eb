"""Each agent CLI completes a flight-delays run through the whole lifecycle, against the stand-in model through
the gateway: the scenario makes it run ./run_experiment, change train.py and commit, and finish;
the run is metered, scored and audited like any other; the ledger's tokens equal the stand-in's own log
exactly, the cost equals tokens x rate card, and the real key reaches nothing the agent or the run keeps."""

from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

import pytest

from orchestrator.agents import resolve_agent
from orchestrator.agents.adapters import adapter_names, get_adapter
from orchestrator.artifacts import ArtifactStore
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run import RunRequest
from orchestrator.run.record import run_row
from orchestrator.specs import load_budget, load_task
from tests.run.standin_setup import (
    ENDPOINT_OF_API,
    MODEL,
    REAL_KEY,
    expected_cost,
    short_flight_delays,
    standin_gateway,
    truth,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: the seed picks the stand-in's variant of step 1: shallower trees (max_depth=4) or deeper (8)
SEEDS = {"claude-code": 0, "codex": 1, "opencode": 2, "pi": 3, "mini-swe-agent": 4}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "safe.directory=*", *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.mark.parametrize("name", adapter_names())
def test_cli_agent_completes_a_flight_delays_run_through_the_gateway(
        name: str, agent_image, built_images, docker_client, home: Home, tmp_path: Path, small_flight_data: Path) -> None:
    adapter = get_adapter(name)
    image = agent_image(name)
    api = adapter.wire_apis[0]
    with standin_gateway(tmp_path / "model", short_flight_delays()) as setup, Ledger(home.ledger_path) as ledger:
        req = RunRequest(task=load_task("flight-delays"), budget=load_budget("smoke"), agent=resolve_agent(name),
                         data_dir=small_flight_data, model=MODEL, endpoint=ENDPOINT_OF_API[api], seed=SEEDS[name])
        run_id, record, calls, usage = setup.run(home, ledger, docker_client, req)
        row = run_row(ledger, run_id)
        events = [e.kind for e in ledger.events(run_id)]
    agent_log = (home.run_dir(run_id) / "agent.log").read_bytes()
    tail = agent_log[-3000:].decode(errors="replace")
    assert record.status == "audited", (record.failure_reason, tail)

    # the scenario ran: a counted experiment, train.py changed and committed as the stand-in's draw said
    played = [(c["action"], c["step"]) for c in calls if c["kind"] != "title"]
    assert played == [("shell", 0), ("shell", 1), ("finish", 2)], played
    assert record.experiments_counted == 1 and record.experiments_refused == 0
    variant = next(c["variant"] for c in calls if c["step"] == 1 and c["kind"] != "title")
    depth = "max_depth=8" if variant == 0 else "max_depth=4"  # deeper or shallower trees
    delivered = home.delivered_dir(run_id) / "workspace"
    assert depth in (delivered / "train.py").read_text()
    assert record.commits == 2 and record.delivered_sha256 is not None
    # scored on the holdout and audited like any other run
    assert row["holdout_score"] is not None and 0.5 < row["holdout_score"] < 0.9
    assert row["compliant"] is True
    assert record.cpu_seconds_metered is not None and record.cpu_seconds_metered > 0

    # the ledger's usage is the stand-in's own count, exactly; cost = tokens x rate card
    assert usage is not None and usage.closed
    assert (usage.endpoint, usage.api, usage.model) == (ENDPOINT_OF_API[api], api, MODEL)
    assert usage.agent_version == adapter.version == image.version
    assert (usage.calls, usage.ok, usage.refused, usage.provider_errors, usage.usage_missing) == (len(calls), len(calls), 0, 0, 0)
    t = truth(calls)
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens, usage.output_tokens,
            usage.reasoning_tokens) == (t["input"], t["cached_input"], t["cache_write"], t["output"], t["reasoning"])
    assert usage.cost_usd == pytest.approx(expected_cost(calls), rel=1e-9)
    assert (row["cost_usd"], row["input_tokens"], row["cached_input_tokens"], row["output_tokens"],
            row["model_calls"]) == (usage.cost_usd, t["input"], t["cached_input"], t["output"], len(calls))
    assert "model.opened" in events and "model.closed" in events and "model.refused" not in events

    # the CLI's own report, read beside the gateway's, agrees with it (OpenCode's leaves out its title call)
    own = usage.self_report
    reported = [c for c in calls if c["kind"] != "title"]
    assert own["complete"] and own["read_from"] == "stdout copy", own
    assert (own["input_tokens"], own["output_tokens"], own["calls"]) == (
        truth(reported)["input"], truth(reported)["output"], len(reported))
    assert row["reported_input_tokens"] == own["input_tokens"]

    # the transcript is in the artifact store, named by the run's manifest
    store = ArtifactStore(home.artifacts_dir)
    manifest = store.get_manifest(record.artifact_manifest)
    assert manifest["model_transcript_sha256"] == usage.transcript_sha256
    transcript = gzip.decompress(store.get_path(usage.transcript_sha256).read_bytes())
    assert transcript.count(b"\n") == len(calls)

    # the real key reached nothing the run kept: the agent's output, the transcript, the ledger, the workspace
    key = REAL_KEY.encode()
    assert key not in agent_log and key not in transcript
    assert key not in home.ledger_path.read_bytes()
    assert not [p for p in delivered.rglob("*") if p.is_file() and key in p.read_bytes()]
    own_cost = "none" if own["cost_usd"] is None else f"${own['cost_usd']:.4f}"
    print(f"\n{name}: agent {record.wall_seconds:.1f} s; calls gateway {usage.calls} / stand-in {len(calls)} / "
          f"CLI {own['calls']}; input tokens {usage.input_tokens} / {t['input']} / {own['input_tokens']} "
          f"(cached {usage.cached_input_tokens}); output {usage.output_tokens} / {t['output']} / "
          f"{own['output_tokens']}; cost gateway ${usage.cost_usd:.4f}, CLI {own_cost}")
