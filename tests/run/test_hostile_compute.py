"""Compute outside Python is inside the budget (issue 11, class 8): whatever the agent starts is counted and
stopped at the budget, and the agent program's own CPU is recorded apart, in real containers."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _log(sbx_home: Path, record: dict, name: str) -> str:
    return (sbx_home / "runs" / record["run_id"] / "delivered" / "workspace" / name).read_text()


def test_loops_that_never_pass_the_gate_are_counted_and_killed_at_the_budget(run_agent, sbx_home) -> None:
    record = run_agent("tools.sh", cpu_seconds=8, hard_stop_cpu_seconds=30)
    assert record["status"] == "delivered", record["failure_reason"]
    log = _log(sbx_home, record, "tools.log").splitlines()
    assert log[:5] == ["loop exit 137"] * 5, log        # bash, awk, perl, sha256sum, python -S: all killed
    assert "sbx: Python refused by the CPU meter: the CPU budget of this run is spent" in log
    assert "python exit 97" in log and "python after budget ran" not in log
    assert "commit exit 0" in log                        # a short command still runs past the budget
    assert "late loop exit 137" in log                   # a new loop dies once the allowance is spent
    allowance = 1.0                                      # 1% of 8, at least 1 CPU-s
    assert 8.0 <= record["cpu_seconds_metered"] < 8.0 + allowance + 1.5, record["cpu_seconds_metered"]
    assert record["meta"]["cpu_seconds_tools"] >= 7.0, record["meta"]
    assert record["meta"]["cpu_seconds_agent"] < 0.5, record["meta"]      # the bash agent itself only waited
    assert record["cpu_seconds_container"] < 30 and record["stop_reason"] == "agent_done"
    kills = [e["detail"] for e in record["events"] if e["kind"] == "kill"]
    assert kills[0]["processes"] >= 5 and any("allowance" in k["reason"] for k in kills), kills


def test_a_storm_of_short_processes_is_counted_to_within_a_few_percent(run_agent, sbx_home) -> None:
    """1,500 processes of a few ms each: none lives long enough to be moved anywhere, all are counted."""
    record = run_agent("storm.sh", cpu_seconds=120, hard_stop_cpu_seconds=200, wall_clock_minutes=5)
    assert record["status"] == "delivered", record["failure_reason"]
    lines = _log(sbx_home, record, "storm.txt").split("\n")
    own, children = ([_seconds(x) for x in line.split()] for line in lines[-3:-1])
    work = sum(own) + sum(children)                      # the storm's shell and its 1,500 children
    tools = record["meta"]["cpu_seconds_tools"]
    assert work > 2.0, lines
    assert 0.97 <= tools / work <= 1.10, (tools, work)   # exits and forks the storm cannot time itself are counted
    assert record["meta"]["cpu_seconds_agent"] < 0.5


def _seconds(text: str) -> float:
    m, _, s = text.rstrip("s").partition("m")
    return int(m) * 60 + float(s)
