"""Probe: readings on their interval, at once on a nudge, each one signalled on `fresh`."""

from __future__ import annotations

import itertools
import time

from orchestrator.run.probes import Probe


def test_nudge_reads_at_once_and_fresh_signals_each_reading() -> None:
    counter = itertools.count()
    probe = Probe("count", lambda: next(counter), interval_s=30)
    probe.start()
    try:
        assert probe.fresh.wait(5)  # the first reading comes at the start
        first = probe.latest()
        assert first is not None and first.value == 0
        probe.fresh.clear()
        assert not probe.fresh.wait(0.2)  # the next one is 30 s away
        start = time.monotonic()
        probe.nudge()
        assert probe.fresh.wait(5)
        assert time.monotonic() - start < 1.0
        second = probe.latest()
        assert second is not None and second.value == 1
    finally:
        probe.stop()


def test_stop_ends_the_wait() -> None:
    probe = Probe("still", lambda: 0, interval_s=30)
    probe.start()
    assert probe.fresh.wait(5)
    probe.stop()
    assert probe._thread is not None
    probe._thread.join(2)
    assert not probe._thread.is_alive()
