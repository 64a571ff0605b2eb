"""Per-endpoint health: is an endpoint answering, or refusing (429, quota, 5xx, timeouts) call after call?

A study asks `refusing()` before launching a run on the endpoint: after `threshold` provider failures in a
row with no success between them the endpoint is refusing, until a call (an agent's, or a probe) succeeds.
A `retry-after` from the upstream is kept so a study knows when to probe again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class EndpointHealth:
    name: str
    consecutive_failures: int = 0
    failures: int = 0
    successes: int = 0
    last_error: str | None = None
    last_ok_at: float | None = None
    last_failure_at: float | None = None
    retry_after_until: float | None = None

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass
class HealthBoard:
    threshold: int = 3
    _by_name: dict[str, EndpointHealth] = field(default_factory=dict)

    def get(self, name: str) -> EndpointHealth:
        return self._by_name.setdefault(name, EndpointHealth(name))

    def ok(self, name: str) -> None:
        h = self.get(name)
        h.consecutive_failures = 0
        h.successes += 1
        h.last_ok_at = time.time()
        h.retry_after_until = None

    def failed(self, name: str, error: str, retry_after_s: float | None = None) -> None:
        h = self.get(name)
        h.consecutive_failures += 1
        h.failures += 1
        h.last_error = error[:500]
        h.last_failure_at = time.time()
        if retry_after_s is not None:
            h.retry_after_until = h.last_failure_at + retry_after_s

    def refusing(self, name: str) -> bool:
        return self.get(name).consecutive_failures >= self.threshold


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
