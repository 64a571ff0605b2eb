"""Facts the run loop decides on, each gathered in its own thread, so a check that blocks (an engine call
that never returns, a slow walk of a huge workspace) delays only its own fact: the wall clock, the hard
stop and the other limits are still checked on time, and a fact that stopped coming is itself a signal."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from orchestrator.log import get_logger

log = get_logger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Reading(Generic[T]):
    value: T
    at: float          # time.monotonic() when the reading finished


class Probe(Generic[T]):
    """Calls `read()` in a daemon thread, again `spacing(value)` seconds after each reading ends (at least
    `interval_s`), or as soon as `nudge()` is called; `latest()` is the last reading, and `fresh` is set
    after each one (for a waiter to react at once). An exception in `read` is logged and retried."""

    def __init__(self, name: str, read: Callable[[], T], interval_s: float,
                 spacing: Callable[[T], float] | None = None) -> None:
        self.name, self.read, self.interval_s = name, read, interval_s
        self.spacing = spacing or (lambda _v: interval_s)
        self.started = 0.0
        self._latest: Reading[T] | None = None
        self.fresh = threading.Event()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.started = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name=f"sbx-probe-{self.name}", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            wait = self.interval_s
            try:
                value = self.read()
                self._latest = Reading(value, time.monotonic())
                self.fresh.set()
                wait = max(self.interval_s, self.spacing(value))
            except Exception as exc:  # noqa: BLE001 - a failed reading is only a missing fact
                log.warning("probe.failed", probe=self.name, error=f"{type(exc).__name__}: {exc}"[:300])
            self._wake.wait(wait)
            self._wake.clear()

    def latest(self) -> Reading[T] | None:
        return self._latest

    def age(self, now: float) -> float:
        """Seconds since the last reading (since the start when there is none yet)."""
        last = self._latest
        return now - (last.at if last is not None else self.started)

    def nudge(self) -> None:
        """Read now (after a reading in progress), not at the next interval: a sign the fact changed."""
        self._wake.set()

    def stop(self) -> None:
        """Stop asking; a reading in progress is left to end on its own (the thread is a daemon)."""
        self._stop.set()
        self._wake.set()


__all__ = ["Probe", "Reading"]
