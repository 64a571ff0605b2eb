"""Watchdog and experiment facts come from the host (issue 11, classes 4 and 7), against hostile agents in
real containers: an unreadable folder, processes stopped with SIGSTOP, git filters, hooks and a FIFO."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _delivered(sbx_home: Path, record: dict, name: str) -> Path:
    return sbx_home / "runs" / record["run_id"] / "delivered" / "workspace" / name


def test_an_unreadable_folder_past_the_disk_cap_stops_the_run(run_agent) -> None:
    record = run_agent("hidefill.sh", disk_mb=64, stall_seconds=120, wall_clock_minutes=2)
    assert record["status"] == "failed" and record["failure_class"] == "agent", record["failure_reason"]
    assert record["stop_reason"] == "disk_cap", record["failure_reason"]
    stop = next(e["detail"] for e in record["events"] if e["kind"] == "stop")
    assert "workspace uses" in stop["detail"] and "cap 64 MB" in stop["detail"]
    assert record["wall_seconds"] < 60


def test_stopped_processes_do_not_stop_the_watchdog(run_agent) -> None:
    """Every process the agent may signal is stopped, an experiment among them: the experiment ends at its
    time limit and the run at its wall clock, on time."""
    record = run_agent("wedge.sh", wall_clock_minutes=0.4, experiment_timeout_s=6, stall_seconds=300)
    assert record["stop_reason"] == "wall_clock", record["failure_reason"]
    assert record["status"] == "failed" and record["failure_class"] == "agent"
    assert 24 <= record["wall_seconds"] < 24 + 10, record["wall_seconds"]
    assert [(x["n"], x["status"]) for x in record["experiments"]] == [(1, "timeout")]


def test_git_filters_hooks_and_a_fifo_never_run_or_hang_on_the_host(run_agent, sbx_home) -> None:
    record = run_agent("gitfilter.sh", experiment_timeout_s=25, wall_clock_minutes=4, cpu_seconds=60,
                       hard_stop_cpu_seconds=120)
    assert record["status"] == "delivered", record["failure_reason"]
    ran = _delivered(sbx_home, record, "ran.txt").read_text()
    assert "No such file" in ran, f"agent-chosen git code ran: {ran}"
    exps = record["experiments"]
    assert [(x["n"], x["status"]) for x in exps] == [(1, "ok"), (2, "ok"), (3, "timeout")], exps
    start = record["meta"]["start_commit"]
    assert [x["commit_sha"] for x in exps] == [start] * 3       # HEAD parsed from .git, the agent never committed
    delivered_train = _delivered(sbx_home, record, "train.py").read_bytes()
    assert exps[1]["train_sha256"] == hashlib.sha256(delivered_train).hexdigest()
    assert exps[0]["train_sha256"] not in (None, exps[1]["train_sha256"])
    assert exps[2]["train_sha256"] is None                      # a FIFO is not read (and does not block)
    # nothing the agent's filters did was charged to the host: each experiment took its own time only
    assert all(x["seconds"] < 25 + 3 for x in exps), [x["seconds"] for x in exps]
