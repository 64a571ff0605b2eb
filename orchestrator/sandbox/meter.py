"""The host-side CPU meter of one run, and the gate socket every sandboxed Python process must pass.

The host owns the meter: a `py` child cgroup under the container's cgroup is the metered set. The gate
(images/sandbox/gate.py) connects to `gate.sock` before user code runs; the host identifies the caller
with SO_PEERCRED (the kernel's word, in the host's pid namespace), checks it belongs to this container,
moves it into `py` (its children inherit the cgroup) and answers OK, or DENY once the budget is spent.
A poll thread reads `py` and the container's total; past the budget it kills everything in `py`; past
the hard stop it kills the container. Every refusal, crossing and kill is an event.
"""

from __future__ import annotations

import os
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.log import get_logger
from orchestrator.sandbox.cgroups import CgroupNode
from orchestrator.specs import Budget

log = get_logger(__name__)

EventSink = Callable[[str, dict[str, Any]], None]
GATE_SOCKET = "gate.sock"
_MAX_HANDLERS = 256  # a hostile agent opening thousands of connections gets refused, not a thread each


def peer_pid(conn: socket.socket) -> int:
    """The pid of the process at the other end of a Unix socket, as the kernel recorded it at connect."""
    pid, _uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid


class _ThreadedUnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False


def serve_unix(path: Path, handle_line: Callable[[socket.socket, bytes], bytes], name: str) -> socketserver.BaseServer:
    """Serve one-request connections on a Unix socket in a daemon thread; the socket is world-connectable."""
    slots = threading.BoundedSemaphore(_MAX_HANDLERS)

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            conn: socket.socket = self.request
            if not slots.acquire(blocking=False):
                conn.sendall(b"DENY busy\n")
                return
            try:
                conn.settimeout(30)
                line = b""
                while not line.endswith(b"\n") and len(line) < 4096:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    line += chunk
                conn.sendall(handle_line(conn, line.strip()))
            except OSError:
                pass  # the caller went away; nothing to answer
            finally:
                slots.release()

    if path.exists():
        path.unlink()
    server = _ThreadedUnixServer(str(path), Handler)
    os.chmod(path, 0o666)  # the agent user (uid 1000) must be able to connect
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name=name, daemon=True).start()
    return server


@dataclass
class MeterState:
    py_seconds: float = 0.0
    container_seconds: float = 0.0
    exhausted: bool = False
    hard_stopped: bool = False
    admitted: int = 0
    denied: int = 0
    overshoot_at_kill: float | None = None
    hard_stop_overshoot: float | None = None
    kills: int = 0
    history: list[tuple[float, float, float]] = field(default_factory=list)  # (t, py, container), sampled


class Meter:
    """Meters one container. Start it after the container starts; stop it before the container is removed."""

    def __init__(
        self,
        container: CgroupNode,
        budget: Budget,
        sock_dir: Path,
        on_event: EventSink,
        kill_container: Callable[[], None],
        interval_s: float = 0.2,
    ) -> None:
        self.container = container
        self.budget = budget
        self.sock_dir = sock_dir
        self.on_event = on_event
        self.kill_container = kill_container
        self.interval_s = interval_s
        self.py = container.child("py")
        self.state = MeterState()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: socketserver.BaseServer | None = None
        self._thread: threading.Thread | None = None
        #: token -> callback(pid) that places an experiment's process; see ExperimentService
        self.placements: dict[bytes, Callable[[int], str | None]] = {}

    # --- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> None:
        self._server = serve_unix(self.sock_dir / GATE_SOCKET, self._on_gate, name="sbx-gate")
        self._thread = threading.Thread(target=self._poll_loop, name="sbx-meter", daemon=True)
        self._thread.start()

    def close_gate(self) -> None:
        """Stop admitting: from now on every gate connection fails, so Python fails closed."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def stop(self) -> None:
        self.close_gate()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def final_reading(self) -> tuple[float, float]:
        """Read `py` and the container total; call while the container is paused (or after it died)."""
        try:
            self.state.py_seconds = self.py.usage_seconds()
            self.state.container_seconds = self.container.usage_seconds()
        except (FileNotFoundError, OSError):
            pass  # the container is gone (hard stop): the last poll's reading stands
        return self.state.py_seconds, self.state.container_seconds

    def remove_cgroups(self) -> None:
        """Kill what is left in `py` and remove it and its children. Must run before the container is removed."""
        try:
            self.py.remove()
        except (FileNotFoundError, OSError) as exc:
            log.warning("meter.cgroup_remove_failed", error=str(exc))

    # --- the gate ----------------------------------------------------------------------------------

    def _on_gate(self, conn: socket.socket, line: bytes) -> bytes:
        pid = peer_pid(conn)
        if not line.startswith(b"GATE"):
            return b"DENY bad request\n"
        token = line[5:].strip()
        if pid not in self.container.pids():
            # Only processes of this container may be moved; anything else connecting is refused.
            self.on_event("gate_foreign_caller", {"pid": pid})
            return b"DENY caller is not in this sandbox\n"
        with self._lock:
            if self.state.exhausted:
                self.state.denied += 1
                self.on_event("gate_denied", {"pid": pid, "reason": "cpu budget spent", "used": round(self.state.py_seconds, 2)})
                return b"DENY the CPU budget of this run is spent\n"
            self.state.admitted += 1
        place = self.placements.pop(token, None) if token and token != b"-" else None
        where = place(pid) if place else None
        if where is None and pid not in self.py.pids():
            # A process already in `py` or below it inherited its place from a metered parent. Moving it up
            # to `py` would take an experiment's Python child (a spawn pool, a setsid subprocess) out of the
            # experiment's cgroup: out of its CPU count, its time-limit kill and its leftover kill.
            self.py.add(pid)
        return b"OK\n"

    # --- polling -----------------------------------------------------------------------------------

    def _poll_loop(self) -> None:
        last_sample = 0.0
        while not self._stop.wait(self.interval_s):
            try:
                py_used = self.py.usage_seconds()
                total = self.container.usage_seconds()
            except (FileNotFoundError, OSError):
                continue  # container gone or paused mid-read; the run loop notices
            self.state.py_seconds, self.state.container_seconds = py_used, total
            now = time.time()
            if now - last_sample >= 5:
                self.state.history.append((now, py_used, total))
                last_sample = now
            self.check(py_used, total)

    def check(self, py_used: float, total: float) -> None:
        """Apply the budget and the hard stop to one reading."""
        if py_used > self.budget.cpu_seconds:
            with self._lock:
                first = not self.state.exhausted
                self.state.exhausted = True
            if first:
                self.state.overshoot_at_kill = py_used - self.budget.cpu_seconds
                self.on_event("budget_exceeded", {"meter": "cpu", "used": round(py_used, 3), "limit": self.budget.cpu_seconds})
            killed = self.py.kill_all() if self.py.pids() else 0
            if killed:
                self.state.kills += killed
                self.on_event("kill", {"cgroup": "py", "processes": killed, "reason": "cpu budget spent"})
        if total > self.budget.hard_stop_cpu_seconds and not self.state.hard_stopped:
            self.state.hard_stopped = True
            self.state.hard_stop_overshoot = total - self.budget.hard_stop_cpu_seconds
            self.on_event("hard_stop", {"used": round(total, 3), "limit": self.budget.hard_stop_cpu_seconds})
            self.kill_container()
