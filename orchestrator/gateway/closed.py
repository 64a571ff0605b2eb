"""A run's model path after the run is over: one unix socket that answers every call as the run's gateway
answers a call past the run's model budget, and reaches nothing.

The scorer of a run that had a model endpoint serves it in its socket folder (`model.sock`, as the sandbox
had it) with the forwarder in front of it on the sandbox's loopback port, so the scored `train.py` meets the
model path its experiments met (docs/scoring.md). It must never reach a model or the real gateway: holdout
rows could leave through it. So there is no upstream here at all, no key and no client: the server builds
its answer from the gateway's own refusals (`server.request_refusal`, `limits.error_response`) and aiohttp's own response, the same bytes the real gateway sends but the date.

    closed = ClosedRun.spent("openai-chat", limits, forwarded=3, usage=TokenUsage(...), cost=0.01)
    with ClosedGateway(sock_dir / SOCKET_NAME, closed) as server:   # served until the block ends
        ...
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from aiohttp import web

from orchestrator.gateway import forwarder
from orchestrator.gateway.limits import ModelLimits, Refusal, check, error_response
from orchestrator.gateway.server import MAX_REQUEST_BYTES, read_bounded, request_refusal
from orchestrator.log import get_logger
from orchestrator.specs.usage import TokenUsage

log = get_logger(__name__)


@dataclass(frozen=True)
class ClosedRun:
    """What the run's gateway says to the next call once the run is over: its wire API and the spent limit."""

    api: str
    reason: str
    message: str

    @classmethod
    def spent(cls, api: str, limits: ModelLimits, *, forwarded: int, usage: TokenUsage, cost: float) -> ClosedRun:
        """The refusal the gateway gives a run with these totals: the first of its limits that is spent (as
        `limits.check` picks it), else its `model_calls` at the calls it let through (a run without limits
        has spent what it used)."""
        refusal = check(limits, calls=forwarded, in_flight=0, usage=usage, cost=cost) or \
            check(ModelLimits(calls=forwarded), calls=forwarded, in_flight=0, usage=TokenUsage(), cost=0.0)
        assert refusal is not None and refusal.kind == "limit"
        return cls(api, refusal.reason, refusal.message)

    def refusal(self) -> Refusal:
        return Refusal(self.reason, self.message, 0, "limit")


class ClosedGateway:
    """Serves `closed` on the unix socket at `path` from a thread of its own until `close()`. The socket's
    owner and mode are the gateway's for a run socket (`forwarder.socket_owner`)."""

    def __init__(self, path: Path, closed: ClosedRun) -> None:
        self.path, self.closed = path, closed
        self.calls = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="sbx-closed-model", daemon=True)
        self._runner: web.AppRunner | None = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self._loop).result(30)
        owner = forwarder.socket_owner()
        if owner is None:
            self.path.chmod(0o666)
        else:
            os.chown(self.path, owner, -1)
            self.path.chmod(0o600)
        return self

    async def _serve(self) -> None:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=5)
        await self._runner.setup()
        await web.UnixSite(self._runner, str(self.path)).start()

    async def _handle(self, request: web.Request) -> web.Response:
        """The gateway's checks in its order (server.Gateway._refusal): the request's, then the spent limit
        (which comes before the gateway's body parse and metering rules, so those never answer here)."""
        self.calls += 1
        api = self.closed.api
        _, size = await read_bounded(request, MAX_REQUEST_BYTES)
        refusal = request_refusal(api, request, size, MAX_REQUEST_BYTES) or self.closed.refusal()
        status, headers, body = error_response(api, refusal)
        response = web.Response(status=status, headers=headers, body=body)
        if refusal.reason == "body":
            response.force_close()  # the rest of the body is never read
        return response

    def close(self) -> None:
        """Stop serving and remove the socket (idempotent; never raises)."""
        if self._thread.is_alive():
            if self._runner is not None:
                with contextlib.suppress(Exception):
                    asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        if not self._loop.is_running() and not self._loop.is_closed():
            self._loop.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        if self.calls:
            log.info("gateway.closed_run_refused", calls=self.calls, reason=self.closed.reason)


__all__ = ["ClosedGateway", "ClosedRun"]
