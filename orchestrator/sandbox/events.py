"""A run's event sink with a bound per kind: a flood of one kind (58,638 refusals in 45 s, measured) is
counted, not written row by row, and a failing write never stops the thread that reported the event."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from orchestrator.log import get_logger

log = get_logger(__name__)

EventSink = Callable[[str, dict[str, Any]], None]
#: events of one kind recorded one by one in a run; past it they are only counted
PER_KIND = 200


class BoundedEvents:
    """Pass the first `per_kind` events of each kind to `sink`; count the rest; `flush` records the counts
    as one `events_not_recorded` event."""

    def __init__(self, sink: EventSink, per_kind: int = PER_KIND) -> None:
        self.sink, self.per_kind = sink, per_kind
        self.seen: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, kind: str, detail: dict[str, Any]) -> None:
        with self._lock:
            self.seen[kind] += 1
            if self.seen[kind] > self.per_kind:
                self.dropped[kind] += 1
                return
        try:
            self.sink(kind, detail)
        except Exception as exc:  # noqa: BLE001 - an event lost is logged; the meter and the service go on
            log.error("events.write_failed", kind=kind, error=f"{type(exc).__name__}: {exc}"[:500])

    def flush(self) -> dict[str, int]:
        """Record how many events of each kind were only counted (once; later calls record what is new)."""
        with self._lock:
            dropped, self.dropped = dict(self.dropped), Counter()
        if dropped:
            try:
                self.sink("events_not_recorded", {"counts": dropped, "recorded_per_kind": self.per_kind})
            except Exception as exc:  # noqa: BLE001
                log.error("events.write_failed", kind="events_not_recorded", error=str(exc)[:500])
        return dropped


__all__ = ["PER_KIND", "BoundedEvents", "EventSink"]
