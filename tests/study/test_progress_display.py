"""The live study display costs the driver O(1) per event: no ledger read on the driver's connection, the
counts read by a poller on its own connection, and the ETA from counters kept as runs finish (issue 23)."""

from __future__ import annotations

import io
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
        assert "on 2 slots" in str(display._heading()[0])
    finally:
        display("end", tally, None)
    assert display._poller is not None and not display._poller._thread.is_alive()


class _Clock:
    """A clock that moves only when told: redraws read it, nothing else moves it."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def _recording_display(ledger: Ledger, name: str, clock: _Clock) -> StudyDisplay:
    from rich.console import Console

    display = StudyDisplay(ledger, name, slots=2, live=True, poll_interval_s=0.05, clock=clock)
    display.console = Console(file=io.StringIO(), width=80, record=True, force_terminal=True, color_system=None)
    return display


def test_the_heading_fits_an_80_column_terminal_in_whole_phrases(ledger: Ledger) -> None:
    """A table's title wraps at the table's width: "about 1h23m left" was cut in two on 80 columns."""
    study = ledger.create_study("flight-delays-reference")
    for i in range(6):
        ledger.new_run(task="t", agent="a", budget_name="b", pairing=f"claude-code/glm-5.3-flash-{i % 3}",
                       study_id=study)
    clock = _Clock()
    display = _recording_display(ledger, "flight-delays-reference", clock)
    tally = Tally(planned=6, started=clock.now - 4_980.0)  # 1h23m in
    tally.running = {"r1": "s0", "r2": "s1"}
    tally.finish("r0", _outcome("r0", seconds=1_000.0))
    display._tally = tally
    display._poller = None
    display.console.print(display.render())
    lines = display.console.export_text().splitlines()
    assert lines[0] == "study flight-delays-reference: 2 running on 2 slots"
    assert lines[1] == "0 CPU-s, 1h23m elapsed, about 41m40s left"  # 1,000 s a run x 5 left / 2 slots
    assert all(len(line) <= 80 for line in lines)
    # a study name too long for the line is cut at the edge, never wrapped onto the figures' line
    long = _recording_display(ledger, "n" * 120, clock)
    long._tally = tally
    long.console.print(long.render())
    head = long.console.export_text().splitlines()
    assert len(head[0]) == 80 and head[0].endswith("…") and head[1].startswith("0 CPU-s,")


def test_the_elapsed_time_moves_on_redraw_without_new_events(ledger: Ledger) -> None:
    """Seen frozen for 30 s: the live display must show the time moving with no run starting or ending.
    Rich's own refresh thread redraws; the clock moves between redraws, and no event is sent."""
    ledger.create_study("quiet")
    clock = _Clock()
    display = _recording_display(ledger, "quiet", clock)
    tally = Tally(planned=4, started=clock.now)
    display("start", tally, None)
    seen: set[str] = set()
    try:
        deadline = time.monotonic() + 60
        for step in range(1, 4):
            clock.now += 30.0 * step
            want = f"{_elapsed(clock.now - tally.started)} elapsed"
            while want not in display.console.export_text(clear=False) and time.monotonic() < deadline:
                time.sleep(0.05)
            seen.add(want)
            assert want in display.console.export_text(clear=False), want
    finally:
        display("end", tally, None)
    assert seen == {"0m30s elapsed", "1m30s elapsed", "3m00s elapsed"}


def _elapsed(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s"
