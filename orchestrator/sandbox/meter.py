"""The host-side CPU meter of one run, and the gate socket every sandboxed Python process must pass.

The host owns the meter. Under the container's cgroup it makes two children:

- `agent`: the agent program's own process, placed there by the launcher (images/sandbox/launch.py) before
  any of the agent's code runs. Everything the agent starts is born there (children inherit the cgroup):
  shells, `python -S`, awk, compiled binaries, the tool calls of a Node or Rust agent CLI;
- `py`: Python processes that passed the gate (images/sandbox/gate.py; SO_PEERCRED says who called, the
  host moves it), and the experiments (`py/exp-N`).

The budget counts `py` plus everything in `agent` except the agent program's own CPU, which is read from
`/proc/<pid>/stat` (utime + stime of its thread group) and recorded apart: what the agent starts counts,
whether it passed the gate or not, and no process has to be moved to be counted (moving one costs 5-70 ms
of the kernel's RCU wait here, in which a short process ends unseen). A Python agent program passes the gate
like any Python process and is metered whole. A poll thread reads the counters; past the budget it kills
everything in `py` and everything in `agent` but the agent program, and Python is refused from then on;
non-Python commands (a `git commit`) get a small allowance past the budget, then are killed at every
poll. Past the hard stop it kills the container. Every refusal, crossing and kill is an event.
"""

from __future__ import annotations

import collections
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
#: the launcher every agent command starts through (-I -S: no site, so no gate, nothing from the workspace)
LAUNCHER = ("/usr/bin/python3", "-I", "-S", "/opt/sbx/sandbox/launch.py")
_MAX_HANDLERS = 256  # a hostile agent opening thousands of connections gets refused, not a thread each
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def agent_argv(argv: list[str] | tuple[str, ...]) -> list[str]:
    """The argv that runs the agent's command `argv` in the sandbox: through the launcher, which has the host
    place it in the `agent` cgroup first (give it the token of `Meter.expect_agent` as SBX_GATE_TOKEN)."""
    return [*LAUNCHER, *argv]


def process_cpu(pid: int) -> tuple[float, int] | None:
    """(CPU-seconds of the thread group, start time in ticks) of a host pid; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK, int(fields[19])
    except (IndexError, ValueError):
        return None


def peer_pid(conn: socket.socket) -> int:
    """The pid of the process at the other end of a Unix socket, as the kernel recorded it at connect."""
    pid, _uid, _gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return pid


class _ThreadedUnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False
    #: the listen backlog (socketserver's default is 5; the kernel caps it at net.core.somaxconn): sixty
    #: Pythons started at once by an agent overflowed 5, and a client that cannot wait is refused at once
    request_queue_size = 1024
    #: answers a connection at once, in the accepting thread, without reading it (None: serve it normally)
    quick: Callable[[], bytes | None] | None = None
    #: connections answered quickly stay open this long (at most this many), so a client that sends its
    #: request after we answered still can (closing at once made its send fail with EPIPE)
    PARK_S = 1.0
    PARK_MAX = 256

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._parked: collections.deque[tuple[float, socket.socket]] = collections.deque()
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        reply = self.quick() if self.quick is not None else None
        if reply is None:
            super().process_request(request, client_address)
            return
        try:  # a refusal, as cheap for the host as it can be: no thread, no read, no ledger write
            request.setblocking(False)
            request.send(reply)
            request.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        now = time.monotonic()
        self._parked.append((now, request))
        while self._parked and (len(self._parked) > self.PARK_MAX or now - self._parked[0][0] > self.PARK_S):
            self._parked.popleft()[1].close()

    def server_close(self) -> None:
        super().server_close()
        while self._parked:
            self._parked.popleft()[1].close()


def serve_unix(path: Path, handle_line: Callable[[socket.socket, bytes], bytes], name: str,
               quick: Callable[[], bytes | None] | None = None) -> socketserver.BaseServer:
    """Serve one-request connections on a Unix socket in a daemon thread; the socket is world-connectable.
    `quick`, when it returns bytes, answers a connection with them at once (a flood of requests that can only
    be refused costs the host an accept and a send each, measured in benchmarks/bench_meter.py)."""
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
    server.quick = quick
    os.chmod(path, 0o666)  # the agent user (uid 1000) must be able to connect
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, name=name, daemon=True).start()
    return server


@dataclass
class MeterState:
    py_seconds: float = 0.0          # the `py` cgroup: gated Python and the experiments
    tools_seconds: float = 0.0       # `agent` minus the agent program: what it started that is not in `py`
    agent_seconds: float = 0.0       # the agent program's own process (not counted in the budget)
    container_seconds: float = 0.0
    exhausted: bool = False
    metered_at_exhaustion: float | None = None
    hard_stopped: bool = False
    admitted: int = 0
    denied: int = 0
    overshoot_at_kill: float | None = None
    hard_stop_overshoot: float | None = None
    kills: int = 0
    history: list[tuple[float, float, float]] = field(default_factory=list)  # (t, metered, container), sampled

    @property
    def metered_seconds(self) -> float:
        """What the budget counts: everything the agent's processes spent but the agent program's own CPU."""
        return self.py_seconds + self.tools_seconds


def after_budget_allowance(budget: Budget) -> float:
    """CPU-seconds of non-Python commands (`git commit`, `cp`) the agent may still spend once the budget is
    spent, before every such command is killed on sight: 1% of the budget, at least 1, at most 30."""
    return min(30.0, max(1.0, 0.01 * budget.cpu_seconds))


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
        self.agent = container.child("agent")
        self.state = MeterState()
        self.allowance = after_budget_allowance(budget)
        #: the agent program: host pid, its start time (to tell a reused pid) and its CPU when placed
        self.agent_pid = 0
        self._agent_start = 0
        self._agent_base = 0.0
        self._agent_frozen = False  # it left `agent` (a Python agent program passed the gate): its share is fixed
        self.agent_placed = threading.Event()
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
        """(metered, container total); call while the container is paused (or after it died)."""
        try:
            self._read()
        except (FileNotFoundError, OSError):
            pass  # the container is gone (hard stop): the last poll's reading stands
        return self.state.metered_seconds, self.state.container_seconds

    def remove_cgroups(self) -> None:
        """Kill what is left in `py` and `agent` and remove them. Must run before the container is removed."""
        for node in (self.py, self.agent):
            try:
                node.remove()
            except (FileNotFoundError, OSError) as exc:
                log.warning("meter.cgroup_remove_failed", cgroup=node.name, error=str(exc))

    # --- the agent program ---------------------------------------------------------------------------

    def expect_agent(self, own_pid: Callable[[], int]) -> str:
        """A one-time token for the launcher of the agent's command: the caller that presents it is placed in
        `agent` if it is the exec's own process (`own_pid()`, the engine's word), else in `py` as any caller."""
        import secrets

        token = secrets.token_hex(16)

        def place(pid: int) -> str | None:
            if own_pid() != pid:
                self.on_event("agent_token_misuse", {"pid": pid})
                return None
            self.place_agent(pid)
            return "agent"

        self.placements[token.encode()] = place
        return token

    def place_agent(self, pid: int) -> None:
        """Put the agent program's process in `agent`; what it starts from now on is born there."""
        cpu = process_cpu(pid)
        with self._lock:
            self.agent.add(pid)
            self.agent_pid = pid
            self._agent_base, self._agent_start = cpu if cpu else (0.0, 0)
            self._agent_frozen = False
        self.agent_placed.set()
        self.on_event("agent_placed", {"pid": pid})

    def _agent_own_seconds(self) -> float:
        """The agent program's CPU since it was placed in `agent` (the last reading once it left or ended)."""
        if not self.agent_pid or self._agent_frozen:
            return self.state.agent_seconds
        cpu = process_cpu(self.agent_pid)
        if cpu is None or cpu[1] != self._agent_start:
            return self.state.agent_seconds  # it ended (or its pid is another process's now)
        return max(self.state.agent_seconds, cpu[0] - self._agent_base)

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
                self.on_event("gate_denied", {"pid": pid, "reason": "cpu budget spent",
                                              "used": round(self.state.metered_seconds, 2)})
                return b"DENY the CPU budget of this run is spent\n"
            self.state.admitted += 1
        place = self.placements.pop(token, None) if token and token != b"-" else None
        where = place(pid) if place else None
        if where is None and pid == self.agent_pid and not self._agent_frozen:
            # a Python agent program: metered whole from here, like every Python process
            self.state.agent_seconds = self._agent_own_seconds()
            self._agent_frozen = True
        if where is None and pid not in self.py.pids():
            # A process already in `py` or below it inherited its place from a metered parent. Moving it up
            # to `py` would take an experiment's Python child (a spawn pool, a setsid subprocess) out of the
            # experiment's cgroup: out of its CPU count, its time-limit kill and its leftover kill.
            self.py.add(pid)
        return b"OK\n"

    # --- polling -----------------------------------------------------------------------------------

    def _read(self) -> None:
        """One reading of every counter. The agent program's CPU is read before its cgroup, so the cgroup
        holds at least that much: the difference (its tools) is never short."""
        own = self._agent_own_seconds()
        py_used = self.py.usage_seconds()
        agent_group = self.agent.usage_seconds()
        total = self.container.usage_seconds()
        self.state.agent_seconds = own
        self.state.py_seconds, self.state.container_seconds = py_used, total
        self.state.tools_seconds = max(0.0, agent_group - own)

    def _poll_loop(self) -> None:
        last_sample = 0.0
        while not self._stop.wait(self.interval_s):
            try:
                self._read()
            except (FileNotFoundError, OSError):
                continue  # container gone or paused mid-read; the run loop notices
            now = time.time()
            if now - last_sample >= 5:
                self.state.history.append((now, self.state.metered_seconds, self.state.container_seconds))
                last_sample = now
            try:
                self.check(self.state.metered_seconds, self.state.container_seconds)
            except OSError as exc:  # a cgroup went with its container mid-check (ENODEV, ENOENT): the run loop
                log.debug("meter.check_failed", error=str(exc))  # notices; a live one is checked at the next poll

    def _kill_metered(self, reason: str, *, tools: bool = True) -> None:
        """Kill everything in `py`, and (with `tools`) everything in `agent` but the agent program."""
        killed = self.py.kill_all() if self.py.pids() else 0
        if tools:
            spare = {self.agent_pid} if self.agent_pid else set()
            if set(self.agent.pids()) - spare:
                killed += self.agent.kill_all(spare=spare)
        if killed:
            self.state.kills += killed
            self.on_event("kill", {"cgroup": "py+agent" if tools else "py", "processes": killed, "reason": reason})

    def check(self, metered: float, total: float) -> None:
        """Apply the budget and the hard stop to one reading."""
        if metered > self.budget.cpu_seconds:
            with self._lock:
                first = not self.state.exhausted
                self.state.exhausted = True
            if first:
                self.state.overshoot_at_kill = metered - self.budget.cpu_seconds
                self.state.metered_at_exhaustion = metered
                self.on_event("budget_exceeded", {"meter": "cpu", "used": round(metered, 3), "limit": self.budget.cpu_seconds,
                                                  "allowance_after": self.allowance})
                self._kill_metered("cpu budget spent")
            else:
                after = metered - (self.state.metered_at_exhaustion or metered)
                self._kill_metered("cpu budget spent" if after <= self.allowance else
                                   "cpu budget and its allowance for commands spent", tools=after > self.allowance)
        if total > self.budget.hard_stop_cpu_seconds and not self.state.hard_stopped:
            self.state.hard_stopped = True
            self.state.hard_stop_overshoot = total - self.budget.hard_stop_cpu_seconds
            self.on_event("hard_stop", {"used": round(total, 3), "limit": self.budget.hard_stop_cpu_seconds})
            self.kill_container()
