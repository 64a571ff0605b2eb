"""The one model gateway of a host, as the run lifecycle uses it.

Whoever drives runs starts one (`sbx run` for its run, `sbx study run` for the study, a fleet node for the
jobs it executes) and hands it to every `RunLifecycle`; each run is served on its own socket in the run's
socket folder (mounted into that run's sandbox only) and closed when its agent stops:

    with GatewayHost.from_files(Path("endpoints.yaml"), Path("ratecards")) as gateway:
        RunLifecycle(home, ledger, client, gateway=gateway).run(request, run_id)

What it adds to the gateway (orchestrator/gateway): the config checks a run's `prepare` step makes
(endpoint, key, model, rate card), the gateway's events routed to the run they belong to (written from a
thread of their own, so a busy ledger never stalls the event loop that serves every run), and the
endpoint health a study reads to stop launching runs on an endpoint that keeps refusing.
"""

from __future__ import annotations

import datetime as dt
import queue
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from orchestrator.failures import ConfigError
from orchestrator.gateway import forwarder
from orchestrator.gateway.health import EndpointHealth
from orchestrator.gateway.limits import ModelLimits
from orchestrator.gateway.probe import ProbeResult, probe
from orchestrator.gateway.server import SOCKET_NAME, Gateway, RunTotals
from orchestrator.gateway.thread import GatewayThread
from orchestrator.log import get_logger
from orchestrator.specs.endpoints import (
    Endpoint,
    Price,
    RateCards,
    check_pairing,
    endpoint,
    load_endpoints,
    load_ratecards,
)

log = get_logger(__name__)

EventSink = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class ModelTargetCheck:
    """What `GatewayHost.check` found for one (endpoint, model) on a date."""

    endpoint: Endpoint
    price: Price
    rate_card_date: dt.date


def check_model_target(endpoints: dict[str, Endpoint], ratecards: RateCards | None, name: str, model: str,
                       on: dt.date, *, endpoints_file: Path | None = None,
                       ratecards_dir: Path | None = None) -> ModelTargetCheck:
    """What a run's prepare step and `sbx study plan` check of a pairing's endpoint: it exists, its key is
    readable, it serves `model`, and a rate card prices `model` on `on`. A ConfigError names the fix."""
    where = f" in {endpoints_file}" if endpoints_file else ""
    try:
        check_pairing(endpoints, name, model)
    except ConfigError as exc:
        raise ConfigError(f"{exc}{where}") from None
    cards = f" in {ratecards_dir}" if ratecards_dir else ""
    if ratecards is None:
        raise ConfigError(f"no rate cards{cards}: a run's cost needs a card pricing {model!r} "
                          "(ratecards/<date>.yaml; docs/gateway.md; --ratecards DIR)")
    card = ratecards.in_force(on)
    price = card.models.get(model) if card is not None else None
    if card is None or price is None:
        raise ConfigError(f"no rate card{cards} prices model {model!r} on {on.isoformat()}: add it to the card "
                          "in force (ratecards/<date>.yaml; docs/gateway.md)")
    return ModelTargetCheck(endpoint(endpoints, name), price, card.date)


class GatewayHost:
    def __init__(self, endpoints: dict[str, Endpoint], ratecards: RateCards | None, *,
                 endpoints_file: Path | None = None, ratecards_dir: Path | None = None,
                 health_threshold: int = 3) -> None:
        self.endpoints = dict(endpoints)
        self.ratecards = ratecards
        self.endpoints_file, self.ratecards_dir = endpoints_file, ratecards_dir
        self._socket_root = Path(tempfile.mkdtemp(prefix="sbx-gateway-"))
        self._thread = GatewayThread(Gateway(self.endpoints, socket_root=self._socket_root, ratecards=ratecards,
                                             on_event=self._on_event, socket_owner=forwarder.socket_owner(),
                                             health_threshold=health_threshold))
        self._sinks: dict[str, EventSink] = {}
        self._events: queue.Queue[tuple[str, str, dict[str, Any]] | threading.Event] = queue.Queue()
        self._writer = threading.Thread(target=self._write_events, name="sbx-gateway-events", daemon=True)
        self._lock = threading.Lock()
        self._started = False

    @classmethod
    def from_files(cls, endpoints_file: Path, ratecards_dir: Path) -> GatewayHost:
        """A host for the endpoints of `endpoints_file` priced by the cards in `ratecards_dir`."""
        if not endpoints_file.is_file():
            raise ConfigError(f"{endpoints_file}: no endpoints file (see endpoints.yaml in the repository and "
                              "docs/gateway.md); give its path with --endpoints")
        cards = load_ratecards(ratecards_dir) if ratecards_dir.is_dir() else None
        return cls(load_endpoints(endpoints_file), cards, endpoints_file=endpoints_file, ratecards_dir=ratecards_dir)

    # --- lifecycle ------------------------------------------------------------------------------------

    def start(self) -> GatewayHost:
        with self._lock:
            if not self._started:
                self._thread.start()
                self._writer.start()
                self._started = True
                log.info("gateway.started", endpoints=sorted(self.endpoints))
        return self

    def stop(self) -> None:
        with self._lock:
            if not self._started:
                self._thread.stop()  # closes its unused event loop
                shutil.rmtree(self._socket_root, ignore_errors=True)
                return
            self._started = False
        try:
            self._thread.stop()
        finally:
            self._flush()
            self._events.put(_STOP)
            self._writer.join(10)
            shutil.rmtree(self._socket_root, ignore_errors=True)
            log.info("gateway.stopped")

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what a run's prepare step checks ---------------------------------------------------------------

    def check(self, name: str, model: str, on: dt.date) -> ModelTargetCheck:
        """The endpoint exists, its key is readable, it serves `model`, and a rate card prices `model` on
        `on`; a ConfigError naming the fix otherwise."""
        return check_model_target(self.endpoints, self.ratecards, name, model, on,
                                  endpoints_file=self.endpoints_file, ratecards_dir=self.ratecards_dir)

    # --- runs -------------------------------------------------------------------------------------------

    def open_run(self, run_id: str, endpoint_name: str, model: str, limits: ModelLimits, transcript_path: Path, *,
                 socket_path: Path | None = None, seed: int | None = None, run_date: dt.date | None = None,
                 on_event: EventSink | None = None) -> Path:
        """Serve run `run_id` on `socket_path` (None: a folder of the gateway's own, for a caller on the host
        such as a judge); its gateway events go to `on_event(kind, fields)`."""
        self.start()
        if on_event is not None:
            self._sinks[run_id] = on_event
        try:
            return self._thread.open_run(run_id, endpoint_name, model, limits, transcript_path, seed=seed,
                                         run_date=run_date, socket_path=socket_path)
        except BaseException:
            self._sinks.pop(run_id, None)
            raise

    def close_run(self, run_id: str, grace_s: float = 30) -> RunTotals:
        """Stop serving the run (calls in flight get `grace_s`); its events are written before this returns."""
        try:
            return self._thread.close_run(run_id, grace_s)
        finally:
            self._flush()
            self._sinks.pop(run_id, None)

    def totals(self, run_id: str) -> RunTotals:
        return self._thread.totals(run_id)

    def own_socket(self, run_id: str) -> Path:
        """Where `open_run` without a `socket_path` serves `run_id` (a caller on the host: a judge)."""
        return self._socket_root / run_id / SOCKET_NAME

    # --- endpoint health ----------------------------------------------------------------------------------

    def health(self, name: str) -> EndpointHealth:
        return self._thread.health(name)

    def refusing(self, name: str) -> bool:
        """True while the endpoint keeps failing (a study launches no new run on it)."""
        return self._started and self._thread.refusing(name)

    def probe(self, name: str, model: str, transcript_path: Path) -> ProbeResult:
        """One tiny call through the gateway (an `ok` answer makes the endpoint healthy again)."""
        self.start()
        return self._thread.call(probe(self._thread.gateway, name, model, transcript_path))

    # --- events -------------------------------------------------------------------------------------------

    def _on_event(self, run_id: str, kind: str, fields: dict[str, Any]) -> None:
        self._events.put((run_id, kind, dict(fields)))  # on the gateway's loop: never blocks

    def _flush(self, timeout_s: float = 30) -> None:
        if not self._writer.is_alive():
            return
        done = threading.Event()
        self._events.put(done)
        done.wait(timeout_s)

    def _write_events(self) -> None:
        while True:
            item = self._events.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            run_id, kind, fields = item
            sink = self._sinks.get(run_id)
            if sink is None:
                continue
            try:
                sink(kind, fields)
            except Exception as exc:  # noqa: BLE001 - a ledger that refuses an event must not stop the others
                log.error("gateway.event_write_failed", run_id=run_id, kind=kind, error=str(exc)[:300])


_STOP = threading.Event()  # a sentinel only: never set

__all__ = ["GatewayHost", "ModelTargetCheck", "check_model_target"]
