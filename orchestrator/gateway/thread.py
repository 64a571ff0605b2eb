"""The gateway on a background thread's event loop, with blocking methods for synchronous callers (the run
lifecycle, `sbx endpoints check`, tests)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from orchestrator.gateway.health import EndpointHealth
from orchestrator.gateway.limits import ModelLimits
from orchestrator.gateway.server import Gateway, RunTotals

T = TypeVar("T")


class GatewayThread:
    """`with GatewayThread(Gateway(...)) as gw: sock = gw.open_run(...); ...; totals = gw.close_run(run_id)`"""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="sbx-gateway", daemon=True)

    def start(self) -> GatewayThread:
        self._thread.start()
        self.call(self.gateway.start())
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            if not self._loop.is_closed() and not self._loop.is_running():
                self._loop.close()  # never started
            return
        try:
            self.call(self.gateway.stop(), timeout=60)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
            self._loop.close()

    def __enter__(self) -> GatewayThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = 120) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def open_run(self, run_id: str, endpoint: str, model: str, limits: ModelLimits, transcript_path: Path,
                 **kwargs: Any) -> Path:
        return self.call(self.gateway.open_run(run_id, endpoint, model, limits, transcript_path, **kwargs))

    def close_run(self, run_id: str, grace_s: float = 30) -> RunTotals:
        return self.call(self.gateway.close_run(run_id, grace_s), timeout=grace_s + 60)

    def totals(self, run_id: str) -> RunTotals:
        return self.call(_value(lambda: self.gateway.totals(run_id)))

    def health(self, endpoint: str) -> EndpointHealth:
        return self.call(_value(lambda: self.gateway.health(endpoint)))

    def refusing(self, endpoint: str) -> bool:
        return self.call(_value(lambda: self.gateway.refusing(endpoint)))


async def _value(fn: Any) -> Any:
    return fn()
