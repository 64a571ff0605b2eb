"""Hostile agents in real containers, each run through --agent-command, against the whole run machinery."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orchestrator.artifacts import ArtifactStore

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _delivered_file(record: dict, sbx_home: Path, name: str) -> str:
    """A file of the delivered working tree, as copied out by the run."""
    return (sbx_home / "runs" / record["run_id"] / "delivered" / "workspace" / name).read_text()


def _kinds(record: dict) -> list[str]:
    return [e["kind"] for e in record["events"]]


def _no_leftovers(docker_client, record: dict) -> None:
    run = record["run_id"]
    assert docker_client.containers.list(all=True, sparse=True, filters={"label": f"sbx.run={run}"}) == []
    assert docker_client.volumes.list(filters={"label": f"sbx.run={run}"}) == []
    # the run's metering cgroups went with its container (other runs may be going on beside this test)
    assert record["container_id"]
    assert list(Path("/sys/fs/cgroup").glob(f"*/docker/{record['container_id']}/py")) == []
    assert list(Path("/sys/fs/cgroup").glob(f"*/docker/{record['container_id']}")) == []


def test_snoop_finds_no_holdout_no_labels_no_secrets_and_no_network(run_agent, sbx_home, docker_client) -> None:
    record = run_agent("snoop.py")
    assert record["status"] == "delivered", record["failure_reason"]
    found = json.loads(_delivered_file(record, sbx_home, "snoop.json"))
    assert found["holdout_named"] == []
    assert sorted(found["label_files"]) == ["/workspace/data/eval.csv", "/workspace/data/train.csv"]
    assert found["secret_env"] == []
    assert found["docker_socket"] is False
    assert all(v != "connected" for v in found["network"].values()), found["network"]
    assert found["network"]["dns"] != "resolved"
    assert found["interfaces"] == ["lo"]
    _no_leftovers(docker_client, record)


def test_tamper_cannot_touch_meter_counter_or_gate_and_is_killed_past_the_budget(run_agent, sbx_home, docker_client) -> None:
    record = run_agent("tamper.sh")
    log = _delivered_file(record, sbx_home, "tamper.log")
    attempts = {line.split(" ", 1)[1]: line.split(" ", 1)[0] for line in log.splitlines() if line[:3] in ("OK ", "FAI")}
    forbidden = [cmd for cmd, verdict in attempts.items() if verdict == "OK"]
    assert forbidden == [], f"tampering that worked: {forbidden}\n{log}"
    assert "burn exit 137" in log                              # the busy loop was killed by the meter
    # From then on no Python runs. Which safe outcome is seen depends on load, not on sbx: the next Python is
    # refused by the gate (exit 97), or the meter's kill of the over-budget agent lands first (137), or it
    # lands before the shell even starts it (no line). Each is asserted exactly; none lets Python run.
    assert "python after budget ran" not in log
    after = re.search(r"^after exit (\d+)$", log, re.M)
    if after is not None:
        assert after[1] in ("97", "137"), log
        assert (after[1] == "97") == ("Python refused by the CPU meter" in log), log
    assert record["status"] == "delivered"
    assert 6 <= record["cpu_seconds_metered"] < 6 + 1.5       # killed within a poll or so of the budget
    kinds = _kinds(record)
    assert "budget_exceeded" in kinds and "kill" in kinds and "gate_denied" in kinds
    assert record["experiments_counted"] == 0                  # the forged request was refused, not counted
    _no_leftovers(docker_client, record)


def test_forkserver_pool_and_a_python_dash_S_loop_are_metered_and_stopped_at_the_budget(run_agent, sbx_home, docker_client) -> None:
    record = run_agent("dodge.sh", cpu_seconds=10, hard_stop_cpu_seconds=14)
    # the pool's 4 x 1 s passed the gate (py); the -S loop never did, but the agent started it, so it is
    # counted too (issue 11, class 8): the budget, not the container's hard stop, ends it
    assert 10.0 <= record["cpu_seconds_metered"] < 11.0, record["cpu_seconds_metered"]
    assert record["meta"]["cpu_seconds_py"] >= 4.0 and record["meta"]["cpu_seconds_tools"] >= 4.0, record["meta"]
    assert record["cpu_seconds_container"] < 14
    assert record["stop_reason"] == "agent_crashed" and record["agent_exit_code"] == 137  # its loop was killed
    kinds = _kinds(record)
    assert "budget_exceeded" in kinds and "kill" in kinds and "hard_stop" not in kinds
    _no_leftovers(docker_client, record)


def test_setsid_child_of_an_experiment_does_not_outlive_it(run_agent, sbx_home, docker_client) -> None:
    record = run_agent("setsid_experiment.sh")
    assert record["status"] == "delivered", record["failure_reason"]
    ps = _delivered_file(record, sbx_home, "ps_after.txt")
    assert "setsid_experiment.sh" in ps, ps  # the listing worked (it shows the agent itself)
    assert "sleep 3600" not in ps and "time.sleep(3600)" not in ps, ps
    assert record["experiments_counted"] == 1
    assert record["experiments"][0]["status"] == "ok"
    assert "experiment_leftovers_killed" in _kinds(record)


def test_sixty_concurrent_calls_against_forty_count_exactly_forty(run_agent, sbx_home, docker_client) -> None:
    record = run_agent("concurrent.sh", experiments=40, cpu_seconds=200, hard_stop_cpu_seconds=300, wall_clock_minutes=6)
    assert record["status"] == "delivered", record["failure_reason"]
    assert record["experiments_counted"] == 40
    assert record["experiments_refused"] == 20
    counted = [e for e in record["experiments"] if e["counted"]]
    assert sorted(e["n"] for e in counted) == list(range(1, 41))
    replies = [json.loads(line.split(" ", 1)[1]) for line in _delivered_file(record, sbx_home, "experiments.log").splitlines()]
    assert sum(r["status"] == "refused" for r in replies) == 20
    # each experiment's Python was placed in its own cgroup, however loaded the engine: a pid the engine had
    # not yet recorded once made an experiment run uncounted in `py` (cpu_seconds 0.0, a false token misuse)
    assert "experiment_token_misuse" not in _kinds(record)
    assert all(e["cpu_seconds"] > 0 for e in counted if e["status"] == "ok"), [
        (e["n"], e["status"], e["cpu_seconds"]) for e in counted]


def test_fork_bomb_ends_as_an_agent_failure_and_leaves_the_host_healthy(run_agent, docker_client) -> None:
    record = run_agent("forkbomb.sh", hard_stop_cpu_seconds=10, wall_clock_minutes=0.5)
    assert record["status"] == "failed" and record["failure_class"] == "agent"
    # the bomb's shells are the agent's tools (issue 11, class 8): the budget kills them and the agent's
    # `sleep` (exit 137: agent_crashed); the hard stop or the wall clock may come first on a slow machine
    assert record["stop_reason"] in ("agent_crashed", "hard_stop", "wall_clock"), record["stop_reason"]
    if record["stop_reason"] == "agent_crashed":
        assert "budget_exceeded" in _kinds(record) and record["agent_exit_code"] == 137, record
    _no_leftovers(docker_client, record)
    # the orchestrator and the engine still work: a normal run right after delivers
    after = run_agent("noop")
    assert after["status"] == "delivered"


def test_memory_bomb_ends_as_an_agent_oom(run_agent, docker_client) -> None:
    record = run_agent("membomb.py", memory_mb=512, cpu_seconds=60, hard_stop_cpu_seconds=90)
    assert record["status"] == "failed" and record["failure_class"] == "agent"
    assert record["stop_reason"] == "agent_oom", record
    _no_leftovers(docker_client, record)


def test_delivered_versions_are_in_the_artifact_store(run_agent, sbx_home) -> None:
    record = run_agent("hpo", experiments=2, cpu_seconds=60, hard_stop_cpu_seconds=90)
    assert record["status"] == "delivered"
    store = ArtifactStore(sbx_home / "artifacts")
    manifest = store.get_manifest(record["artifact_manifest"])
    assert record["delivered_sha256"] in manifest["train_versions"].values()
    for exp in record["experiments"]:
        assert store.has(exp["train_sha256"])
    assert record["commits"] >= 3


@pytest.mark.parametrize(
    ("agent", "changes", "reason"),
    [
        ("diskfill.sh", {"disk_mb": 64, "stall_seconds": 120}, "disk_cap"),
        ("sleeper.sh", {"stall_seconds": 6}, "stall"),
        ("sleeper.sh", {"wall_clock_minutes": 0.15, "stall_seconds": 120, "experiment_timeout_s": 5}, "wall_clock"),
    ],
)
def test_the_watchdog_stops_a_run_with_its_reason(run_agent, docker_client, agent, changes, reason) -> None:
    record = run_agent(agent, **changes)
    assert record["status"] == "failed" and record["failure_class"] == "agent"
    assert record["stop_reason"] == reason
    stops = [e["detail"] for e in record["events"] if e["kind"] == "stop"]
    assert stops and stops[0]["reason"] == reason and stops[0]["detail"]
    assert record["wall_seconds"] < 60
    _no_leftovers(docker_client, record)
