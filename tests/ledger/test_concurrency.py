"""Several threads of one process, and several processes, write to one ledger at once and lose nothing."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.failures import IllegalTransition, LedgerError
from orchestrator.ledger import Ledger, RunState
from tests.ledger.ledger_helpers import plan, write_events_in_a_process

THREADS, PER_THREAD = 8, 200


def _in_threads(n: int, target: Callable[[int], None]) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def run(i: int) -> None:
        try:
            start.wait()
            target(i)
        except Exception as exc:  # noqa: BLE001 - re-raised below, in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]


def _ticks(ledger: Ledger, run_id: str) -> Counter[int]:
    return Counter(e.detail["worker"] for e in ledger.events(run_id, kind="tick"))


def test_eight_threads_sharing_one_ledger_lose_no_event(ledger: Ledger) -> None:
    run_id = plan(ledger)

    def write(worker: int) -> None:
        for i in range(PER_THREAD):
            ledger.add_event(run_id, "tick", {"worker": worker, "i": i})

    _in_threads(THREADS, write)
    assert _ticks(ledger, run_id) == {w: PER_THREAD for w in range(THREADS)}
    seen = {(e.detail["worker"], e.detail["i"]) for e in ledger.events(run_id, kind="tick")}
    assert len(seen) == THREADS * PER_THREAD


def test_threads_with_their_own_ledgers_lose_no_event(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as led:
        run_id = plan(led)

    def write(worker: int) -> None:
        with Ledger(path) as own:
            for i in range(PER_THREAD // 4):
                own.add_event(run_id, "tick", {"worker": worker, "i": i})

    _in_threads(THREADS, write)
    with Ledger(path) as led:
        assert _ticks(led, run_id) == {w: PER_THREAD // 4 for w in range(THREADS)}


def test_concurrent_experiments_get_distinct_numbers(ledger: Ledger) -> None:
    run_id = plan(ledger)
    _in_threads(THREADS, lambda w: [ledger.add_experiment(run_id, status="ok") for _ in range(20)])
    numbers = sorted(x.n for x in ledger.experiments(run_id))
    assert numbers == list(range(1, THREADS * 20 + 1))
    assert ledger.get_run(run_id).experiments_counted == THREADS * 20


def test_a_race_to_advance_a_run_has_exactly_one_winner(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as led:
        run_id = plan(led)
    outcomes: list[str] = []

    def move(worker: int) -> None:
        with Ledger(path) as own:
            try:
                own.advance(run_id, RunState.STARTING)
                outcomes.append("won")
            except IllegalTransition:
                outcomes.append("refused")

    _in_threads(THREADS, move)
    assert sorted(outcomes) == ["refused"] * (THREADS - 1) + ["won"]
    with Ledger(path) as led:
        assert len(led.events(run_id, kind="transition")) == 1


def test_two_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as led:
        run_id = plan(led)
    ctx = multiprocessing.get_context("spawn")  # never fork a process that may hold threads or a connection
    barrier = ctx.Barrier(2)
    procs = [
        ctx.Process(target=write_events_in_a_process, args=(str(path), run_id, w, PER_THREAD, barrier))
        for w in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    with Ledger(path) as led:
        assert _ticks(led, run_id) == {0: PER_THREAD, 1: PER_THREAD}
        experiments = led.experiments(run_id)
        assert sorted(x.n for x in experiments) == list(range(1, 2 * PER_THREAD // 10 + 1))
        assert led.get_run(run_id).experiments_counted == len(experiments)


def test_a_ledger_is_not_used_across_fork(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledger, "_pid", -1)  # as if this were the child of a fork
    with pytest.raises(LedgerError, match="across fork"):
        ledger.list_runs()


def test_a_writer_that_cannot_get_the_lock_gets_a_ledger_error(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as led:
        run_id = plan(led)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        with Ledger(path, busy_timeout_s=0.2) as led:  # opening an up-to-date ledger only reads
            with pytest.raises(LedgerError, match="could not lock the ledger"):
                led.add_event(run_id, "tick")
            holder.execute("ROLLBACK")
            led.add_event(run_id, "tick")  # the connection is usable again
            assert len(led.events(run_id, kind="tick")) == 1
    finally:
        holder.close()
