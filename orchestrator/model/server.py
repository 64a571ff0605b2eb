"""The stand-in model's HTTP server (aiohttp): the three wire APIs, streaming and not, on TCP or a unix socket.

Routes (with or without the `/v1` prefix): POST /v1/messages (Anthropic), POST /v1/chat/completions (Chat),
POST /v1/responses (Responses), POST /v1/messages/count_tokens, GET /v1/models. Every model call is logged as
one JSONL line with the step played, the seeded draw, and the usage the reply reports (the ground truth that
the gateway's parsed usage must equal).

The run seed, per request, is the first of: the `x-sbx-seed` header (the gateway adds it for endpoints with
`run_headers: true`), a `@seed=N` suffix on the request's model name, the server's default seed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from aiohttp import web

from orchestrator.model import wire
from orchestrator.model.conversation import Api, read, tokens
from orchestrator.model.reply import Reply, decide
from orchestrator.model.scenario import Scenario

SEED_HEADER = "x-sbx-seed"
RUN_HEADER = "x-sbx-run-id"
_MODEL_SEED = re.compile(r"@seed=(\d{1,18})$")
_ROUTES: dict[str, Api] = {"/messages": "anthropic", "/chat/completions": "openai-chat", "/responses": "openai-responses"}
MAX_BODY = 64 * 1024 * 1024


@dataclass
class Fault:
    """A failure the stand-in plays instead of answering (tests of the gateway's error handling).

    status: answer with this HTTP status and the API's error shape; delay_s: wait this long before the
    first byte; cut_after: for a stream, close the connection after this many events (no usage sent)."""

    status: int | None = None
    delay_s: float = 0.0
    cut_after: int | None = None
    retry_after: str | None = None


def error_body(api: Api, status: int, message: str) -> dict[str, Any]:
    """An error in the API's own shape."""
    kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
            429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    code = "rate_limit_exceeded" if status == 429 else None
    return {"error": {"message": message, "type": kind if status < 500 else "server_error", "param": None, "code": code}}


class StandIn:
    """A scripted model. Use `await start_tcp()` / `start_unix()` in an event loop, or `serve_in_thread`."""

    def __init__(self, scenario: Scenario, *, log_path: Path | None = None, seed: int = 0,
                 event_delay_s: float = 0.0, vary: bool = False) -> None:
        self.scenario = scenario
        self.seed = seed
        #: replay ground truth (issue 26): each request draws its own seed from (run seed, arrival number), so
        #: the same bytes sent again may get another variant; the log's `seed`/`variant` say which it got
        self.vary = vary
        self.event_delay_s = event_delay_s
        self.faults: deque[Fault] = deque()
        self.calls = 0
        #: every request that reached the stand-in, any path (hostile tests: what the gateway let through).
        #: In memory only; a credential is kept as the sha256 of its header value, never the value.
        self.requests: list[dict[str, Any]] = []
        self._log_path = log_path
        self._log: TextIO | None = None
        self._lock = threading.Lock()
        self._runner: web.AppRunner | None = None

    # --- serving --------------------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY, middlewares=[self._seen])
        for prefix in ("/v1", ""):
            for route, api in _ROUTES.items():
                app.router.add_post(prefix + route, self._model_call(api))
            app.router.add_post(prefix + "/messages/count_tokens", self._count_tokens)
            app.router.add_get(prefix + "/models", self._models)
        return app

    async def start_tcp(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve on host:port (0 picks a free port); returns the base URL (no /v1)."""
        runner = await self._start()
        site = web.TCPSite(runner, host, port)
        await site.start()
        # aiohttp types its private _server as an optional AbstractServer; after start() it is the
        # asyncio.Server that has the sockets
        sock = site._server.sockets[0]  # type: ignore[union-attr]
        return f"http://{host}:{sock.getsockname()[1]}"

    async def start_unix(self, path: Path) -> Path:
        runner = await self._start()
        await web.UnixSite(runner, str(path)).start()
        return path

    async def _start(self) -> web.AppRunner:
        if self._log_path is not None and self._log is None:
            self._log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = self._log_path.open("a", buffering=1)
        # a short grace on stop: a test's or a demo's streams are not worth waiting a minute for (aiohttp's default)
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1)
        await self._runner.setup()
        return self._runner

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._log is not None:
            self._log.close()
            self._log = None

    # --- handlers -------------------------------------------------------------------------------------

    @web.middleware
    async def _seen(self, request: web.Request, handler: Any) -> web.StreamResponse:
        creds = {k: hashlib.sha256(v.encode()).hexdigest() for k, v in request.headers.items()
                 if k.lower() in ("authorization", "x-api-key")}
        self.requests.append({"method": request.method, "target": request.raw_path, "credentials": creds})
        return await handler(request)

    def _model_call(self, api: Api):
        async def handler(request: web.Request) -> web.StreamResponse:
            return await self._answer(api, request)
        return handler

    async def _answer(self, api: Api, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("not an object")
            conv = read(api, body)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            return web.json_response(error_body(api, 400, f"stand-in cannot read the request: {exc}"), status=400)
        seed = self._seed(request, conv.model)
        if self.vary:
            digest = hashlib.sha256(f"sbx-standin-vary:{seed}:{self.calls}".encode()).digest()
            seed = int.from_bytes(digest[:6], "big")
        reply = decide(conv, self.scenario, seed)
        fault = self.faults.popleft() if self.faults else None
        self.calls += 1
        if fault and fault.delay_s:
            await asyncio.sleep(fault.delay_s)
        if fault and fault.status:
            self._record(api, request, raw, conv.model, conv.stream, seed, reply, reported=False, fault=fault.status)
            headers = {"retry-after": fault.retry_after} if fault.retry_after else None
            return web.json_response(error_body(api, fault.status, "stand-in fault"), status=fault.status,
                                     headers=headers)
        if not conv.stream:
            self._record(api, request, raw, conv.model, False, seed, reply, reported=True)
            return web.json_response(wire.render(api, reply, conv.model, stream=False), dumps=_dumps)
        events = wire.render(api, reply, conv.model, stream=True, include_usage=conv.include_usage)
        cut = fault.cut_after if fault else None
        reported = cut is None and (api != "openai-chat" or conv.include_usage)
        self._record(api, request, raw, conv.model, True, seed, reply, reported=reported,
                     fault="cut" if cut is not None else None)
        response = web.StreamResponse(headers={"content-type": "text/event-stream; charset=utf-8",
                                               "cache-control": "no-cache"})
        await response.prepare(request)
        for i, frame in enumerate(wire.sse(events)):
            if cut is not None and i >= cut:
                assert request.transport is not None
                request.transport.close()
                return response
            await response.write(frame)
            if self.event_delay_s:
                await asyncio.sleep(self.event_delay_s)
        await response.write_eof()
        return response

    async def _count_tokens(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read() or b"{}")
        return web.json_response({"input_tokens": read("anthropic", body).input_tokens})

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "sbx-standin", "object": "model",
                                                              "created": wire.CREATED, "owned_by": "sbx"}]})

    def _seed(self, request: web.Request, model: str) -> int:
        header = request.headers.get(SEED_HEADER, "")
        if header.isdigit():
            return int(header)
        match = _MODEL_SEED.search(model)
        return int(match.group(1)) if match else self.seed

    def _record(self, api: Api, request: web.Request, raw: bytes, model: str, stream: bool, seed: int, reply: Reply,
                *, reported: bool, fault: int | str | None = None) -> None:
        if self._log is None:
            return
        line = {
            "ts": time.time(), "run_id": request.headers.get(RUN_HEADER), "seed": seed, "api": api,
            "path": request.path_qs, "model": model, "stream": stream, "step": reply.step, "variant": reply.variant,
            "draw": reply.draw, "action": reply.action, "kind": reply.kind, "tool": reply.tool,
            "arguments": reply.arguments, "text": reply.text, "usage": reply.usage.as_dict(),
            "usage_reported": reported, "fault": fault, "request_sha256": hashlib.sha256(raw).hexdigest(),
        }
        with self._lock:
            self._log.write(json.dumps(line, separators=(",", ":")) + "\n")


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def read_log(path: Path) -> list[dict[str, Any]]:
    """The stand-in's JSONL log as a list of records."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def log_totals(records: list[dict[str, Any]], run_id: str | None = None) -> dict[str, int]:
    """Usage summed over the calls whose usage reached the client (optionally of one run)."""
    totals = {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0}
    for rec in records:
        if rec["usage_reported"] and (run_id is None or rec["run_id"] == run_id):
            for key in totals:
                totals[key] += rec["usage"][key]
    return totals


@contextlib.contextmanager
def serve_in_thread(standin: StandIn, *, unix_path: Path | None = None, host: str = "127.0.0.1",
                    port: int = 0) -> Iterator[str]:
    """Serve `standin` from a background thread's event loop; yields the base URL (or the socket path)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box: dict[str, Any] = {}

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            if unix_path is not None:
                box["url"] = str(loop.run_until_complete(standin.start_unix(unix_path)))
            else:
                box["url"] = loop.run_until_complete(standin.start_tcp(host, port))
        except BaseException as exc:  # surfaced in the caller's thread
            box["error"] = exc
        ready.set()
        if "error" not in box:
            loop.run_forever()
        loop.run_until_complete(standin.stop())
        loop.close()

    thread = threading.Thread(target=run, name="sbx-standin", daemon=True)
    thread.start()
    ready.wait(30)
    if "error" in box:
        thread.join(5)
        raise box["error"]
    try:
        yield box["url"]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


__all__ = ["Fault", "StandIn", "error_body", "log_totals", "read_log", "serve_in_thread", "tokens"]
