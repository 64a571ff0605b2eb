"""The model gateway: one asyncio server per host that holds the real keys and serves each run on its own
unix socket.

    gw = Gateway(endpoints, socket_root=..., ratecards=..., on_event=callback)
    await gw.start()
    sock = await gw.open_run(run_id, "anthropic", "claude-sonnet-4-5", ModelLimits(...), transcript_path)
    ...  # mount sock's folder into the sandbox; the forwarder exposes it as http://127.0.0.1:PORT
    totals = await gw.close_run(run_id)
    await gw.stop()

The run is known from the socket a request arrived on, never from anything in the request. Each request is
checked (method, the request target exactly one of the API's, body size, the run's limits, one strict parse of
the body and the metering rules: policy.py), its worst case reserved against the run's token and cost limits,
then forwarded to exactly the target checked, with the agent's body bytes unchanged and the real key
injected; the upstream's bytes come back unchanged, streamed as they arrive. Every call is recorded in the
run's transcript (see transcript.py) with usage parsed per API (usage.py) and its cost at the rate card in
force on the run's date.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import inspect
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from pydantic import SecretStr
from yarl import URL

from orchestrator.failures import ConfigError
from orchestrator.gateway import limits as limits_mod
from orchestrator.gateway import policy
from orchestrator.gateway.health import EndpointHealth, HealthBoard, parse_retry_after
from orchestrator.gateway.limits import ModelLimits, Refusal
from orchestrator.gateway.scrub import Scrubber
from orchestrator.gateway.sse import SSEParser
from orchestrator.gateway.transcript import (
    MAX_TRANSCRIPT_BYTES,
    EventsRecord,
    TranscriptWriter,
    body_record,
    headers_record,
)
from orchestrator.gateway.usage import StreamUsage, TokenUsage, from_body
from orchestrator.log import get_logger
from orchestrator.specs.endpoints import Endpoint, Price, RateCards, cost_usd
from orchestrator.specs.transcript import FORMAT_VERSION as VERSION

log = get_logger(__name__)

#: a call's body past this is refused (413) and its connection closed
MAX_REQUEST_BYTES = 32 * 1024 * 1024

EventCallback = Callable[[str, str, dict[str, Any]], Any]
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "trailers", "transfer-encoding", "upgrade", "proxy-connection"})
_DROP_UPSTREAM = HOP_BY_HOP | {"host", "content-length", "accept-encoding", "authorization", "x-api-key", "api-key",
                               "cookie", "x-goog-api-key"}
#: headers some proxies and frameworks read as another method or path than the request line's: the upstream
#: must get exactly the request that was checked
_OVERRIDES = frozenset({"x-http-method-override", "x-http-method", "x-method-override", "x-original-url",
                        "x-rewrite-url", "x-original-uri", "x-forwarded-host", "x-forwarded-prefix",
                        "x-forwarded-path", "x-forwarded-uri", "forwarded", "x-forwarded-for", "x-real-ip"})
_DROP_UPSTREAM = _DROP_UPSTREAM | _OVERRIDES
_DROP_DOWNSTREAM = HOP_BY_HOP | {"content-length"}
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SOCKET_NAME = "model.sock"
MAX_EVENTS_PER_RUN = 100
#: after this many refusals the run's socket is closed: what a flood of refused calls costs the host is bounded
#: per run (a run refused this often has long stopped making progress through its model)
MAX_REFUSALS_PER_RUN = 256
#: the longest path a unix socket may have (sun_path is 108 bytes with its terminating NUL)
MAX_SOCKET_PATH_BYTES = 107


def check_socket_path(sock: Path, what: str = "socket path") -> None:
    """A ConfigError when `sock` is too long to bind (the kernel would refuse it with a bare OSError)."""
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH_BYTES:
        raise ConfigError(f"{what} {sock} is longer than a unix socket allows ({MAX_SOCKET_PATH_BYTES} bytes)")
#: transcript lines smaller than this are compressed on the event loop (a thread hop costs more)
_INLINE_WRITE = 256 * 1024
#: request bodies smaller than this are parsed on the event loop
_INLINE_PARSE = 512 * 1024


@dataclass
class RunTotals:
    run_id: str
    endpoint: str
    model: str
    transcript: Path
    calls: int = 0               # every call recorded, refused ones included
    forwarded: int = 0           # calls sent upstream
    ok: int = 0
    refused: int = 0
    provider_errors: int = 0
    client_errors: int = 0
    upstream_timeouts: int = 0
    usage_missing: int = 0       # forwarded calls whose usage could not be read
    unpriced: int = 0            # calls with usage but no price for the model on the run's date
    usage: TokenUsage = field(default_factory=TokenUsage)
    cost_usd: float = 0.0
    #: the largest worst case reserved for one call: parallel calls end under limit + this (plus the next two)
    max_reserved_tokens: int = 0
    max_reserved_cost_usd: float = 0.0
    #: what calls used past their own reservation (inputs the body does not carry), summed over calls
    over_reservation_tokens: int = 0
    over_reservation_cost_usd: float = 0.0
    #: transcript lines dropped at the transcript's byte cap (0: every call is in the file)
    transcript_dropped: int = 0
    #: why the run's model access ended early ("usage_missing", "refusals"), else None
    access_ended: str | None = None
    #: outcome of the last call to end: a run whose agent gave up on "provider_error"/"upstream_timeout" ended
    #: on the provider (the study's `infra`), not on its own doing
    last_outcome: str | None = None
    #: that call's error (e.g. "upstream connection failed: ClientConnectorError: Cannot connect to host ..."),
    #: None when it succeeded: a run that ended on its provider names the cause with it
    last_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["usage"], d["transcript"] = self.usage.as_dict(), str(self.transcript)
        return d


@dataclass
class _Run:
    run_id: str
    endpoint: Endpoint
    model: str
    limits: ModelLimits
    key: SecretStr | None
    price: Price | None
    seed: int | None
    writer: TranscriptWriter
    socket_path: Path
    #: the socket's folder was made by the gateway (removed on close) rather than given by the caller
    own_folder: bool = True
    runner: web.AppRunner | None = None
    next_index: int = 0
    in_flight: int = 0
    events_sent: int = 0
    closing: bool = False
    site: web.UnixSite | None = None
    #: the upstream URL of each allowed target: exactly base_url + the target checked, never re-encoded
    urls: dict[str, URL] = field(default_factory=dict)
    #: worst cases of the calls in flight (policy.worst_case), released as each call settles
    reserved_tokens: int = 0
    reserved_cost: float = 0.0
    refusals: int = 0
    #: set once the run's model access has ended: every later call gets this refusal
    ended: Refusal | None = None
    #: the task closing the run's socket after its refusal cap (held so it is not collected mid-way)
    closer: asyncio.Future[None] | None = None
    totals: RunTotals = field(kw_only=True)
    idle: asyncio.Event = field(default_factory=asyncio.Event)


class Gateway:
    """socket_owner: chown each run's socket to this uid with mode 0600 (the forwarder's uid, 990, when the
    gateway runs as root), so only the forwarder can connect; None leaves it 0666 (the folder is mounted into
    that run's sandbox only)."""

    def __init__(
        self,
        endpoints: dict[str, Endpoint],
        *,
        socket_root: Path,
        ratecards: RateCards | None = None,
        on_event: EventCallback | None = None,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        max_response_bytes: int = 64 * 1024 * 1024,
        health_threshold: int = 3,
        socket_owner: int | None = None,
        max_refusals: int = MAX_REFUSALS_PER_RUN,
        max_transcript_bytes: int = MAX_TRANSCRIPT_BYTES,
        output_cap: int = policy.DEFAULT_OUTPUT_CAP,
    ) -> None:
        self.endpoints = dict(endpoints)
        self.socket_root = socket_root
        self.ratecards = ratecards
        self.on_event = on_event
        self.max_request_bytes = max_request_bytes
        self.max_response_bytes = max_response_bytes
        self.socket_owner = socket_owner
        self.max_refusals = max_refusals
        self.max_transcript_bytes = max_transcript_bytes
        self.output_cap = output_cap
        self.healthboard = HealthBoard(threshold=health_threshold)
        self._runs: dict[str, _Run] = {}
        self._session: aiohttp.ClientSession | None = None

    # --- lifecycle ------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, keepalive_timeout=30, ttl_dns_cache=300)
            # auto_decompress off: the agent gets the upstream's bytes unchanged; we ask for identity anyway
            self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False,
                                                  skip_auto_headers=("User-Agent",), cookie_jar=aiohttp.DummyCookieJar())

    async def stop(self) -> None:
        for run_id in list(self._runs):
            await self.close_run(run_id, grace_s=5)
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Gateway:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def open_run(self, run_id: str, endpoint: str, model: str, limits: ModelLimits, transcript_path: Path,
                       *, seed: int | None = None, run_date: dt.date | None = None,
                       socket_path: Path | None = None) -> Path:
        """Serve a run on a fresh unix socket; returns the socket's path. By default the socket is made in a
        folder of its own (socket_root/run_id, removed on close); `socket_path` puts it where the caller
        says instead (the run's socket folder, already mounted into its sandbox; only the socket is removed)."""
        if self._session is None:
            raise RuntimeError("Gateway.start() first")
        if not _RUN_ID.match(run_id):
            raise ConfigError(f"run id {run_id!r} is not usable in a socket path")
        if run_id in self._runs:
            raise ConfigError(f"run {run_id} already has a model socket")
        try:
            ep = self.endpoints[endpoint]
        except KeyError:
            raise ConfigError(f"no endpoint named {endpoint!r}; known: {', '.join(sorted(self.endpoints))}") from None
        key = ep.read_key()
        on = run_date or dt.datetime.now(dt.UTC).date()
        price = self.ratecards.price(model, on) if self.ratecards else None
        sock = socket_path if socket_path is not None else self.socket_root / run_id / SOCKET_NAME
        folder = sock.parent
        check_socket_path(sock)
        if socket_path is None:
            folder.mkdir(parents=True, exist_ok=True)
            folder.chmod(0o755)
        elif not folder.is_dir():
            raise ConfigError(f"socket folder {folder} does not exist")
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()
        run = _Run(run_id=run_id, endpoint=ep, model=model, limits=limits, key=key, price=price, seed=seed,
                   writer=TranscriptWriter(transcript_path, self.max_transcript_bytes), socket_path=sock,
                   own_folder=socket_path is None,
                   urls={t: URL(ep.base_url + t, encoded=True) for t in policy.TARGETS[ep.api]},
                   totals=RunTotals(run_id, ep.name, model, transcript_path))
        run.idle.set()
        app = web.Application(client_max_size=self.max_request_bytes)

        async def handle(request: web.Request) -> web.StreamResponse:
            return await self._handle(run, request)

        app.router.add_route("*", "/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=5)
        await runner.setup()
        run.site = web.UnixSite(runner, str(sock))
        await run.site.start()
        if self.socket_owner is None:
            sock.chmod(0o666)
        else:  # only the forwarder's uid may connect: the agent cannot go around the forwarder's bounds
            os.chown(sock, self.socket_owner, -1)
            sock.chmod(0o600)
        run.runner = runner
        self._runs[run_id] = run
        log.info("gateway.run_opened", run_id=run_id, endpoint=ep.name, model=model, priced=price is not None)
        return sock

    async def close_run(self, run_id: str, grace_s: float = 30) -> RunTotals:
        """Stop serving the run, let calls in flight finish (up to grace_s), close its transcript."""
        run = self._runs.pop(run_id)
        run.closing = True
        if run.closer is not None:
            await run.closer
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(run.idle.wait(), grace_s)
        if run.runner is not None:
            await run.runner.cleanup()
        await asyncio.to_thread(run.writer.close)
        if run.own_folder:
            shutil.rmtree(run.socket_path.parent, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                run.socket_path.unlink()
        t = run.totals
        log.info("gateway.run_closed", run_id=run_id, calls=t.calls, ok=t.ok, refused=t.refused,
                 provider_errors=t.provider_errors, cost_usd=round(t.cost_usd, 6))
        return t

    def totals(self, run_id: str) -> RunTotals:
        """The running totals of an open run."""
        return self._runs[run_id].totals

    def health(self, endpoint: str) -> EndpointHealth:
        return self.healthboard.get(endpoint)

    def refusing(self, endpoint: str) -> bool:
        """True while the endpoint keeps failing (study: do not launch new runs on it)."""
        return self.healthboard.refusing(endpoint)

    # --- one call -------------------------------------------------------------------------------------

    async def _handle(self, run: _Run, request: web.Request) -> web.StreamResponse:
        t0 = time.perf_counter()
        api = run.endpoint.api
        target = request.raw_path  # the request line's target, as sent: decided on and forwarded as is
        rec: dict[str, Any] = {
            "v": VERSION, "index": run.next_index, "api": api, "method": request.method[:16],
            "path": (target if target.startswith("/") else request.path_qs)[:2048], "started_at": time.time(),
            "ttfb_s": None, "total_s": None, "request": {"headers": headers_record(request.headers)},
            "response": {"status": None, "headers": {}, "body": None, "events": None},
            "stream": False, "usage": None, "cost_usd": None, "outcome": "ok", "error": None, "speaker": None,
        }
        run.next_index += 1
        run.in_flight += 1
        run.idle.clear()
        reserved: tuple[int, float] | None = None
        try:
            raw, size = await read_bounded(request, self.max_request_bytes)
            refusal = self._refusal(run, request, target, size)  # cheap checks first: a flood pays no parse
            body: dict[str, Any] | None = None
            if refusal is None:
                parsed = await self._parse(raw)
                refusal = parsed if isinstance(parsed, Refusal) else policy.metering_refusal(api, parsed)
                body = parsed if isinstance(parsed, dict) else None
            if refusal is None:
                # the limits again, and the reservation, with no await between them: calls in flight on the
                # same loop see each other's reservations, however they interleave
                refusal = self._refusal(run, request, target, size)
            if refusal is not None:
                # a refused call keeps no body, only its size and hash: refusals cost the disk next to nothing
                rec["request"]["truncated"] = size
                digest = hashlib.sha256(raw).hexdigest()
                return await self._refuse(run, request, rec, refusal, f"body {size} bytes, sha256 {digest}")
            assert body is not None
            reserved = self._reserve(run, policy.worst_case(api, target, body, size, self.output_cap))
            body_record(raw, rec["request"])
            run.totals.forwarded += 1
            return await self._forward(run, request, run.urls[target], raw, rec, t0)
        except asyncio.CancelledError:  # close_run's grace ran out, or the gateway is stopping
            rec["outcome"], rec["error"] = "refused", "the run's socket was closed while the call was in flight"
            raise
        except Exception as exc:  # e.g. the agent hung up before its body arrived
            if rec["outcome"] == "ok":
                rec["outcome"] = "client_error" if rec["response"]["status"] is None else "provider_error"
            rec["error"] = (rec["error"] or f"{type(exc).__name__}: {exc}")[:500]
            raise
        finally:
            rec["total_s"] = time.perf_counter() - t0
            await self._settle(run, rec, reserved, expects_usage=target not in policy.FREE_TARGETS)
            run.in_flight -= 1
            if run.in_flight == 0:
                run.idle.set()

    def _refusal(self, run: _Run, request: web.Request, target: str, size: int) -> Refusal | None:
        if run.closing:
            return Refusal("closing", "sbx: this run's model socket is closing", 503, "request")
        if run.ended is not None:
            return run.ended
        refusal = request_refusal(run.endpoint.api, request, size, self.max_request_bytes)
        if refusal is not None:
            return refusal
        t = run.totals
        return limits_mod.check(run.limits, calls=t.forwarded, in_flight=run.in_flight - 1, usage=t.usage,
                                cost=t.cost_usd, reserved_tokens=run.reserved_tokens, reserved_cost=run.reserved_cost)

    @staticmethod
    async def _parse(raw: bytes) -> dict[str, Any] | Refusal:
        """policy.parse_body; a big body off the loop, so that parsing megabytes of small objects does not stall
        every other run's calls (the GIL is still shared, but the loop gets its turns)."""
        if len(raw) < _INLINE_PARSE:
            return policy.parse_body(raw)
        return await asyncio.to_thread(policy.parse_body, raw)

    def _reserve(self, run: _Run, worst: policy.WorstCase) -> tuple[int, float]:
        """Hold the call's worst case against the run's limits until it settles."""
        cost = 0.0
        if run.price is not None:
            p = run.price
            in_price = max(p.input, p.cached_input or 0.0, p.cache_write or 0.0)
            cost = (worst.input * in_price + worst.output * p.output) / 1_000_000
        run.reserved_tokens += worst.tokens
        run.reserved_cost += cost
        t = run.totals
        t.max_reserved_tokens = max(t.max_reserved_tokens, worst.tokens)
        t.max_reserved_cost_usd = max(t.max_reserved_cost_usd, cost)
        return worst.tokens, cost

    async def _refuse(self, run: _Run, request: web.Request, rec: dict[str, Any], refusal: Refusal,
                      body_note: str) -> web.Response:
        status, headers, body = limits_mod.error_response(run.endpoint.api, refusal)
        rec["outcome"] = "refused"
        rec["error"] = f"refused: {refusal.reason}: {refusal.message} ({body_note})"[:1000]
        rec["response"].update(status=status, headers=dict(headers), body=body.decode())
        self._emit(run, "model.refused", reason=refusal.reason, message=refusal.message, index=rec["index"],
                   status=status)
        response = web.Response(status=status, headers=headers, body=body)
        run.refusals += 1
        if refusal.reason == "body" or run.refusals >= self.max_refusals or run.ended is not None:
            response.force_close()  # the rest of the body is never read / the socket is closing
        if run.refusals == self.max_refusals:
            self._end_access(run, "refusals", f"sbx: this run's model socket closed after {run.refusals} refused "
                             "calls", close_socket=True)
        return response

    def _end_access(self, run: _Run, reason: str, message: str, *, close_socket: bool = False,
                    **fields: Any) -> None:
        """From now on every call of the run is refused with `message`; with close_socket the run's socket stops
        accepting and is removed, and its idle connections close (the forwarder answers 502 from then on)."""
        if run.ended is None:
            run.ended = Refusal(reason, message, 0, "limit")
            run.totals.access_ended = reason
            self._emit(run, "model.access_ended", once=True, reason=reason, message=message, **fields)
            log.warning("gateway.access_ended", run_id=run.run_id, reason=reason)
        if close_socket and run.site is not None:
            site, run.site = run.site, None
            run.closer = asyncio.ensure_future(self._close_socket(run, site))

    async def _close_socket(self, run: _Run, site: web.UnixSite) -> None:
        """Stop accepting connections. Calls in flight finish (cutting them mid-body leaves the forwarder's
        client waiting); every answer from now on closes its connection, so an open connection carries at
        most one more (refused) call."""
        with contextlib.suppress(Exception):
            await site.stop()
            with contextlib.suppress(FileNotFoundError):
                run.socket_path.unlink()

    async def _forward(self, run: _Run, request: web.Request, url: URL, raw: bytes, rec: dict[str, Any],
                       t0: float) -> web.StreamResponse:
        assert self._session is not None
        ep = run.endpoint
        secret = run.key.get_secret_value() if run.key else None
        scrub = Scrubber(secret)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=ep.connect_timeout_s, sock_read=ep.idle_timeout_s)
        response: web.StreamResponse | None = None
        try:
            async with self._session.post(url, data=raw, timeout=timeout,
                                          headers=self._upstream_headers(run, request), allow_redirects=False) as up:
                rec["response"]["status"] = up.status
                rec["response"]["headers"] = headers_record(up.headers)
                down_headers = {k: scrub.text(v) for k, v in up.headers.items() if k.lower() not in _DROP_DOWNSTREAM}
                if up.headers.get("content-type", "").startswith("text/event-stream"):
                    rec["stream"] = True
                    response = web.StreamResponse(status=up.status, headers=down_headers)
                    await response.prepare(request)
                    await self._relay_stream(run, request, up, response, rec, scrub, t0)
                else:
                    body = await up.content.read(self.max_response_bytes + 1)
                    rec["ttfb_s"] = time.perf_counter() - t0
                    if len(body) > self.max_response_bytes:
                        raise aiohttp.ClientPayloadError(f"response body over {self.max_response_bytes} bytes")
                    body_record(body, rec["response"])
                    rec["response"]["body"] = rec["response"].get("body")
                    if 200 <= up.status < 300:
                        rec["usage"] = _usage_dict(from_body(ep.api, body))
                    response = web.Response(status=up.status, headers=down_headers, body=scrub.whole(body))
                    await response.prepare(request)
                    await response.write_eof()
                self._classify(run, rec, up.status, up.headers.get("retry-after"))
                return response
        except TimeoutError:
            return await self._upstream_failed(run, request, rec, response, "upstream_timeout",
                                               f"upstream timed out (connect {ep.connect_timeout_s:g} s, idle {ep.idle_timeout_s:g} s)")
        except (aiohttp.ClientError, OSError) as exc:
            return await self._upstream_failed(run, request, rec, response, "provider_error",
                                               f"upstream connection failed: {type(exc).__name__}: {exc}"[:500])

    async def _relay_stream(self, run: _Run, request: web.Request, up: aiohttp.ClientResponse,
                            response: web.StreamResponse, rec: dict[str, Any], scrub: Scrubber, t0: float) -> None:
        parser, tracker, events = SSEParser(), StreamUsage(run.endpoint.api), EventsRecord()
        agent_gone = False
        try:
            agent_gone = await self._pump(up, response, parser, tracker, events, rec, scrub, t0)
        finally:  # also when the upstream fails mid-stream: what arrived is recorded, usage included
            rec["response"]["events"] = events.events
            if events.dropped:
                rec["response"]["events_dropped"] = events.dropped
                rec["response"]["truncated"] = events.size + events.dropped_bytes
            if tracker.usage is not None:
                rec["usage"] = tracker.usage.as_dict()
        if tracker.error:
            rec["error"] = f"error event in stream: {tracker.error}"[:500]
        elif not tracker.finished and 200 <= up.status < 300:
            rec["error"] = "stream ended before its end marker"
        if agent_gone:
            rec["error"] = (rec["error"] + "; " if rec["error"] else "") + "agent disconnected mid-stream"

    async def _pump(self, up: aiohttp.ClientResponse, response: web.StreamResponse, parser: SSEParser,
                    tracker: StreamUsage, events: EventsRecord, rec: dict[str, Any], scrub: Scrubber,
                    t0: float) -> bool:
        """Relay the stream as it arrives; returns whether the agent hung up on the way."""
        agent_gone = False
        async for chunk in up.content.iter_any():
            if rec["ttfb_s"] is None:
                rec["ttfb_s"] = time.perf_counter() - t0
            for name, data in parser.feed(chunk):
                events.add(name, data)
                tracker.feed(name, data)
            if not agent_gone:  # keep reading after the agent hangs up: the call is billed, its usage counts
                try:
                    await response.write(scrub.feed(chunk))
                except (ConnectionError, aiohttp.ClientConnectionResetError):
                    agent_gone = True
        for name, data in parser.close():
            events.add(name, data)
            tracker.feed(name, data)
        if not agent_gone:
            with contextlib.suppress(ConnectionError, aiohttp.ClientConnectionResetError):
                await response.write(scrub.flush())
                await response.write_eof()
        return agent_gone

    def _classify(self, run: _Run, rec: dict[str, Any], status: int, retry_after: str | None) -> None:
        ep = run.endpoint.name
        if 200 <= status < 300:
            err = rec["error"] or ""
            if err.startswith("error event") or err.startswith("stream ended"):
                rec["outcome"] = "provider_error"
                self.healthboard.failed(ep, err)
            else:
                self.healthboard.ok(ep)
            return
        if status in (401, 403, 408, 429) or status >= 500 or 300 <= status < 400:
            rec["outcome"] = "provider_error"
            rec["error"] = rec["error"] or f"upstream answered {status}"
            self.healthboard.failed(ep, rec["error"], parse_retry_after(retry_after))
            self._emit(run, "model.provider_error", status=status, index=rec["index"], error=rec["error"])
        else:
            rec["outcome"] = "client_error"
            rec["error"] = rec["error"] or f"upstream answered {status}"

    async def _upstream_failed(self, run: _Run, request: web.Request, rec: dict[str, Any],
                               response: web.StreamResponse | None, outcome: str, error: str) -> web.StreamResponse:
        rec["outcome"], rec["error"] = outcome, error
        self.healthboard.failed(run.endpoint.name, error)
        self._emit(run, "model.provider_error", outcome=outcome, index=rec["index"], error=error)
        if response is not None and response.prepared:  # mid-stream: all we can do is cut the connection
            if request.transport is not None:
                request.transport.close()
            return response
        status = 504 if outcome == "upstream_timeout" else 502
        refusal = Refusal(outcome, f"sbx gateway: {error}", status, "request")
        status, headers, body = limits_mod.error_response(run.endpoint.api, refusal)
        if rec["response"]["status"] is None:
            rec["response"].update(status=status, headers=dict(headers), body=body.decode())
        return web.Response(status=status, headers=headers, body=body)

    def _upstream_headers(self, run: _Run, request: web.Request) -> dict[str, str]:
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in _DROP_UPSTREAM and not k.lower().startswith("x-sbx-")}
        headers["Accept-Encoding"] = "identity"
        if run.key is not None:
            secret = run.key.get_secret_value()
            if run.endpoint.auth_header == "x-api-key":
                headers["x-api-key"] = secret
            else:
                headers["Authorization"] = f"Bearer {secret}"
        if run.endpoint.run_headers:
            headers["x-sbx-run-id"] = run.run_id
            if run.seed is not None:
                headers["x-sbx-seed"] = str(run.seed)
        return headers

    async def _settle(self, run: _Run, rec: dict[str, Any], reserved: tuple[int, float] | None, *,
                      expects_usage: bool) -> None:
        t = run.totals
        t.calls += 1
        outcome = rec["outcome"]
        counter = {"ok": "ok", "refused": "refused", "provider_error": "provider_errors",
                   "client_error": "client_errors", "upstream_timeout": "upstream_timeouts"}[outcome]
        setattr(t, counter, getattr(t, counter) + 1)
        t.last_outcome = outcome
        t.last_error = None if outcome == "ok" else rec["error"]
        usage = TokenUsage(**rec["usage"]) if rec["usage"] is not None else None
        cost = cost_usd(run.price, usage)
        if usage is not None:
            t.usage = t.usage + usage
            rec["cost_usd"] = cost
            if cost is None:
                t.unpriced += 1
            else:
                t.cost_usd += cost
        elif expects_usage and outcome != "refused" and 0 < (rec["response"]["status"] or 0) < 300:
            t.usage_missing += 1
            if outcome == "ok":
                # an answered call with no usage is a mode the gateway cannot meter: it happens once per run
                self._end_access(run, "usage_missing", "sbx: a model call of this run came back without usage, "
                                 "so no limit could count it; this run's model access has ended",
                                 index=rec["index"])
        if reserved is not None:
            run.reserved_tokens -= reserved[0]
            run.reserved_cost -= reserved[1]
            if usage is not None:
                t.over_reservation_tokens += max(0, usage.tokens - reserved[0])
                t.over_reservation_cost_usd += max(0.0, (cost or 0.0) - reserved[1])
        secret = run.key.get_secret_value() if run.key else None
        try:
            big = len(rec["request"].get("body") or "") + (rec["response"].get("body") and len(rec["response"]["body"]) or 0)
            if big > _INLINE_WRITE or rec["response"]["events"] and len(rec["response"]["events"]) > 2000:
                await asyncio.to_thread(run.writer.write, rec, secret)  # compressing megabytes: off the loop
            else:
                run.writer.write(rec, secret)  # cheaper than a thread hop
            if run.writer.dropped and not t.transcript_dropped:
                self._emit(run, "model.transcript_capped", once=True, index=rec["index"], max_bytes=run.writer.max_bytes,
                           lines=run.writer.lines)
            t.transcript_dropped = run.writer.dropped
        except (OSError, ValueError) as exc:  # a full disk must not take the gateway down
            log.error("gateway.transcript_write_failed", run_id=run.run_id, error=str(exc)[:200])

    def _emit(self, run: _Run, kind: str, *, once: bool = False, **fields: Any) -> None:
        """Send an event; per-call events stop at MAX_EVENTS_PER_RUN, `once` events (at most one of a kind per
        run) always go."""
        if self.on_event is None:
            return
        if not once:
            run.events_sent += 1
        if not once and run.events_sent > MAX_EVENTS_PER_RUN:
            if run.events_sent == MAX_EVENTS_PER_RUN + 1:
                kind, fields = "model.events_capped", {"after": MAX_EVENTS_PER_RUN}
            else:
                return
        try:
            result = self.on_event(run.run_id, kind, fields)
            if inspect.isawaitable(result):
                asyncio.ensure_future(result)
        except Exception as exc:  # a broken callback must not break the call
            log.error("gateway.event_callback_failed", run_id=run.run_id, kind=kind, error=str(exc)[:200])


def request_refusal(api: str, request: web.Request, size: int, max_request_bytes: int) -> Refusal | None:
    """The refusal of a call that is never forwarded whatever the run's limits: a method other than POST, a
    request target that is not exactly one of the API's (policy.target_refusal: the key is never used on
    other paths), a body over the size limit."""
    if request.method != "POST":
        return Refusal("method", f"sbx: method {request.method[:16]} is not allowed", 405, "request")
    refusal = policy.target_refusal(api, request.raw_path)
    if refusal is not None:
        return refusal
    if size > max_request_bytes:
        return Refusal("body", f"sbx: request body over {max_request_bytes} bytes", 413, "request")
    return None


def _usage_dict(usage: TokenUsage | None) -> dict[str, int] | None:
    return None if usage is None else usage.as_dict()


async def read_bounded(request: web.Request, limit: int) -> tuple[bytes, int]:
    """Up to `limit` bytes of the body and the bytes read; reading stops once the body is over the limit (the
    call is then refused and its connection closed, so an endless body ties up nothing)."""
    chunks, size = [], 0
    async for chunk in request.content.iter_any():
        size += len(chunk)
        chunks.append(chunk)
        if size > limit:
            break
    return b"".join(chunks)[:limit], size
