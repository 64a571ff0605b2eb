"""The live study display costs the driver O(1) per event: no ledger read on the driver's connection, the
counts read by a poller on its own connection, and the ETA from counters kept as runs finish (issue 23)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.ledger import Ledger, RunState
from orchestrator.study.backend import JobResult
from orchestrator.study.progress import StudyDisplay, study_status
from orchestrator.study.runner import Tally


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "ledger.sqlite") as led:
        yield led


def _outcome(run_id: str, status: str = "audited", seconds: float = 10.0) -> JobResult:
    return JobResult(run_id=run_id, status=status, failure_class=None, failure_reason=None, slot="s0",
                      seconds=seconds)


def test_the_eta_comes_from_counters_and_equals_the_mean_attempt_over_the_runs_left() -> None:
    tally = Tally(planned=10)
    assert tally.eta_seconds(2) is None
    tally.finish("a", _outcome("a", seconds=10))
    tally.finish("b", _outcome("b", "delivered", seconds=30))  # left delivered: its evaluation is still to come
    tally.finish("c", _outcome("c", seconds=20))
    # 2 of 10 done; mean attempt 20 s; 8 left on 2 slots
    assert (tally.done, tally.attempts) == (2, 3)
    assert tally.eta_seconds(2) == 20 * 8 / 2


def test_events_never_read_the_ledger_on_the_drivers_connection(ledger: Ledger) -> None:
    study = ledger.create_study("wide")
    ids = [ledger.new_run(task="t", agent="a", budget_name="b", pairing=f"p{i % 3}", study_id=study)
           for i in range(300)]
    for run_id in ids[:40]:
        ledger.advance(run_id, RunState.STARTING)
    display = StudyDisplay(ledger, "wide", slots=2, live=True, poll_interval_s=0.05)
    tally = Tally(planned=len(ids))
    display("start", tally, None)
    try:
        statements: list[str] = []
        assert ledger._conn is not None
        ledger._conn.set_trace_callback(statements.append)
        for run_id in ids[:200]:
            tally.running[run_id] = "s0"
            display("started", tally, None)
            tally.running.pop(run_id)
            tally.finish(run_id, _outcome(run_id))
            display("finished", tally, _outcome(run_id))
        ledger._conn.set_trace_callback(None)
        assert statements == []
        # the poller's figures are the ledger's own, read on its connection
        deadline = time.monotonic() + 30
        while display._poller is not None and display._poller.latest is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert display._poller is not None and display._poller.latest == study_status(ledger, study)
        table = display._table()
        assert table.row_count == 3
        assert "on 2 slots" in str(table.title)
    finally:
        display("end", tally, None)
    assert display._poller is not None and not display._poller._thread.is_alive()
