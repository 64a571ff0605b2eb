"""Step A's driver on the host: one fresh scorer container made like an experiment's, the runner started in
it as `python train.py`, one socket to it, and a watch on its CPU and output.

What the scored code meets, and what an experiment of the run met (`sandbox/docker.py`,
`sandbox/experiments.py`), are the same by construction: the run's own sandbox image; user `agent`; hostname
`sandbox`; working folder `/workspace`; tmpfs `/tmp` and `/home/agent`; the read-only socket folder at
`/run/sbx` with `gate.sock` (the CPU gate answers as the meter does) and `experiments.sock` (which refuses:
the run is over); the container environment `HOME`, `SBX_RUN_ID` and the experiment's own `SBX_GATE_TOKEN`,
`SBX_EXPERIMENT`, `HOME`; for a run with a model endpoint, `model.sock` in that folder and the forwarder
on the sandbox's loopback port in front of it, both refusing every call as the run's gateway refuses a call
past its spent budget (gateway/closed.py: nothing reaches a model); the process `/opt/sbx/venv/bin/python train.py` started by `docker exec`, its
output a pipe read by the host; the run's cores, cpuset, memory and pids. What differs is listed in
docs/scoring.md (the workspace is a tmpfs of `work_mb` instead of a volume, so the scored code cannot fill
the host's disk).

Limits are the host's: wall-clock deadlines on every frame, and a watch thread that reads the container's
CPU-seconds (kernel accounting) and the output's size every 0.2 s and kills the container past the training
or predicting CPU limit (`cpu_limit`) or the output limit (`output_flooding`). Docker SDK errors become
InfraError; the runner's misbehaviour becomes a protocol exception for the caller to classify.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import socketserver
import threading
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Self

import docker
import docker.errors

from orchestrator import paths
from orchestrator.failures import CgroupError, ScorerError
from orchestrator.gateway import forwarder
from orchestrator.gateway.closed import ClosedGateway, ClosedRun
from orchestrator.gateway.server import SOCKET_NAME as MODEL_SOCKET
from orchestrator.log import get_logger
from orchestrator.sandbox.cgroups import CgroupNode
from orchestrator.sandbox.container import Box, ContainerSpec, Mount, create_box, engine_errors
from orchestrator.sandbox.experiments import EXPERIMENT_SOCKET, ExperimentResult
from orchestrator.sandbox.meter import GATE_SOCKET, peer_pid, serve_unix
from orchestrator.sandbox.process import ContainerProcess
from orchestrator.scoring.options import ScoreOptions, cpuset_size

log = get_logger(__name__)

SOCK_MOUNT = "/run/sbx"            # as the sandbox's (sandbox/docker.py)
WORKSPACE = "/workspace"           # as the sandbox's (sandbox/workspace.py)
HOME = "/home/agent"
PYTHON = "/opt/sbx/venv/bin/python"
SCORE_SOCKET = "score.sock"
RUNNER_FILE = ".runner.py"         # in the socket folder until the setup command has copied it
#: the in-container half of scoring (orchestrator/incontainer/scorer_runner.py), read as text, never imported
RUNNER_SOURCE = paths.incontainer_source("scorer_runner.py").encode()
_HEAD = _TAIL = 4000
_WATCH_S = 0.2


def engine_cpus(client: docker.DockerClient) -> int:
    with engine_errors("asking the engine for its cores"):
        return int(client.info().get("NCPU") or os.cpu_count() or 1)


def adhoc_run_id() -> str:
    """An id shaped like a run's (`r-<utc time>-<hex>`), for scoring outside a run (`sbx score`)."""
    return f"r-{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def experiment_environment(token: str, experiment: int) -> dict[str, str]:
    """What `sandbox/experiments.py` gives an experiment's `python train.py` on top of the container's."""
    return {"SBX_GATE_TOKEN": token, "SBX_EXPERIMENT": str(experiment), "HOME": HOME}


class Output:
    """The scored process's output as the host reads it from the exec stream: the first and last 4 KB and a
    byte count (the limit is the watch's)."""

    def __init__(self) -> None:
        self.bytes_seen = 0
        self._head = bytearray()
        self._tail = bytearray()

    def write(self, chunk: bytes) -> None:
        self.bytes_seen += len(chunk)
        if len(self._head) < _HEAD:
            self._head += chunk[: _HEAD - len(self._head)]
        self._tail += chunk
        del self._tail[:-_TAIL]

    def close(self) -> None:
        pass

    def settle(self, quiet_s: float = 0.15, limit_s: float = 2.0) -> None:
        """Wait until no output has arrived for `quiet_s` (at most `limit_s`): the exec stream lags behind
        the socket, and what was printed before READY must be read before the first batch is sent."""
        end = time.monotonic() + limit_s
        last, since = self.bytes_seen, time.monotonic()
        while time.monotonic() < end:
            time.sleep(0.03)
            if self.bytes_seen != last:
                last, since = self.bytes_seen, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                return

    def snapshot(self) -> tuple[str, str]:
        """(head, tail) as text; the tail is empty while the output fits in the head."""
        head = bytes(self._head).decode(errors="replace")
        tail = bytes(self._tail).decode(errors="replace") if self.bytes_seen > _HEAD else ""
        return head, tail


class Watch:
    """Kills the container past the current phase's CPU limit or the output limit; says which it was."""

    def __init__(self, box: Box, output: Output, options: ScoreOptions) -> None:
        self.box, self.output, self.options = box, output, options
        self.phase = "setup"
        self.limits = {"training": options.train_cpu_limit_s, "predicting": options.predict_cpu_limit_s}
        self.phase_start = 0.0
        self.used: dict[str, float] = {}
        self.tripped: tuple[str, str] | None = None   # (reason, detail)
        self.last: float | None = None                 # the last CPU reading (the cgroup goes with a kill)
        self._node: CgroupNode | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="sbx-score-watch", daemon=True)

    def cpu(self) -> float | None:
        try:
            if self._node is None:
                self._node = self.box.cgroup()
            self.last = self._node.usage_seconds()
        except (OSError, CgroupError):
            return None
        return self.last

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def enter(self, phase: str) -> None:
        """A new phase starts: the CPU used so far is the previous phase's."""
        now = self.cpu()
        with self._lock:
            if now is not None:
                self.used[self.phase] = round(now - self.phase_start, 3)
                self.phase_start = now
            self.phase = phase

    def _trip(self, reason: str, detail: str) -> None:
        with self._lock:
            if self.tripped is None:
                self.tripped = (reason, detail)
        self.box.kill()

    def _loop(self) -> None:
        limit_bytes = self.options.output_limit_mb << 20
        while not self._stop.wait(_WATCH_S):
            if self.output.bytes_seen > limit_bytes:
                self._trip("output_flooding", f"the output reached the {self.options.output_limit_mb} MB limit "
                                              f"while {self.phase}")
                return
            now = self.cpu()
            with self._lock:
                limit, phase, start = self.limits.get(self.phase), self.phase, self.phase_start
            if now is not None and limit is not None and now - start > limit:
                self._trip("cpu_limit", f"{now - start:.1f} CPU-seconds while {phase}, past the limit of "
                                        f"{limit:g} (what one experiment of the run's budget may use)")
                return


class _OneLineServer:
    """A socket in the scorer's socket folder that answers like the sandbox's (gate, experiments)."""

    def __init__(self, path: Path, answer, name: str) -> None:
        self.server: socketserver.BaseServer | None = serve_unix(path, answer, name=name)

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def _gate_answer(_conn: socket.socket, line: bytes) -> bytes:
    return b"OK\n" if line.startswith(b"GATE") else b"DENY bad request\n"


def _experiments_answer(remaining: int):
    """The experiment service's refusal, shaped as sandbox/experiments.py shapes it: the run is over."""

    def answer(_conn: socket.socket, line: bytes) -> bytes:
        try:
            request = json.loads(line or b"{}")
            op = request.get("op") if isinstance(request, dict) else None
            note = str(request.get("note", ""))[:500] if isinstance(request, dict) else ""
        except (ValueError, UnicodeDecodeError):
            op, note = None, ""
        if op != "run":
            return json.dumps({"status": "refused", "reason": "unknown request; send {\"op\": \"run\"}"}).encode() + b"\n"
        record = ExperimentResult(n=None, status="refused", counted=False, reason="the run is ending", note=note)
        reply = {k: v for k, v in asdict(record).items() if k != "started_at"}
        reply["eval_auc"] = None
        reply["remaining"] = remaining
        return json.dumps(reply).encode() + b"\n"

    return answer


class ScorerContainer:
    """One scoring's container and its connection. Use as a context manager: leaving removes everything."""

    def __init__(self, client: docker.DockerClient, image: str, sock_dir: Path, options: ScoreOptions, *,
                 run_id: str | None, dataset: str, env_run_id: str, experiment: int = 1,
                 experiments_left: int = 0, role: str = "main", model: ClosedRun | None = None) -> None:
        self.client, self.image, self.sock_dir, self.options = client, image, sock_dir, options
        self.run_id, self.dataset, self.role = run_id, dataset, role
        self.env_run_id, self.experiment, self.experiments_left = env_run_id, experiment, experiments_left
        #: the run's model path, closed (a run with a model endpoint); None: the run had none, nor has this
        self.model = model
        self._model_server: ClosedGateway | None = None
        safe = re.sub(r"[^a-zA-Z0-9_.-]", "-", run_id or "adhoc")[:40]
        self.name = f"sbx-score-{safe}-{uuid.uuid4().hex[:8]}"
        self.box: Box | None = None
        self.runner: ContainerProcess | None = None
        self.output = Output()
        self.watch: Watch | None = None
        self.conn: socket.socket | None = None
        self._listener: socket.socket | None = None
        self._servers: list[_OneLineServer] = []

    # --- lifecycle -----------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def spec(self, cpus: float) -> ContainerSpec:
        o = self.options
        return ContainerSpec(
            kind="scorer", image=self.image, user="agent", workdir=WORKSPACE, cpus=cpus, cpuset=o.cpuset,
            memory_bytes=o.memory_mb << 20, pids=o.pids, hostname="sandbox",
            tmpfs={"/tmp": "size=256m,mode=1777", HOME: "size=128m,uid=1000,gid=1000,mode=0700",
                   WORKSPACE: f"size={o.work_mb}m,uid=1000,gid=1000,mode=0755"},
            mounts=[Mount(SOCK_MOUNT, str(self.sock_dir), type="bind", read_only=True)],
            environment={"HOME": HOME, "SBX_RUN_ID": self.env_run_id}, run_id=self.run_id or "adhoc",
            labels={"sbx.dataset": self.dataset, "sbx.score_role": self.role}, name=self.name,
            # the container ends by itself past every limit of a scoring, even if `sbx score` was SIGKILLed
            deadline_s=o.connect_timeout_s + o.train_timeout_s + o.predict_timeout_s + 300,
        )

    def _listen(self) -> None:
        path = self.sock_dir / SCORE_SOCKET
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        os.chmod(path, 0o666)  # uid 1000 in the container connects
        self._listener.listen(1)

    def start(self) -> None:
        """Serve the sockets, create and start the container, put the runner in place as train.py and start
        it as `python train.py`. Returns once the runner's process is running."""
        o = self.options
        cpus = min(o.cpus, engine_cpus(self.client), cpuset_size(o.cpuset) if o.cpuset else o.cpus)
        runner = self.sock_dir / RUNNER_FILE
        runner.write_bytes(RUNNER_SOURCE)
        runner.chmod(0o644)
        self._servers = [_OneLineServer(self.sock_dir / GATE_SOCKET, _gate_answer, "sbx-score-gate"),
                         _OneLineServer(self.sock_dir / EXPERIMENT_SOCKET, _experiments_answer(self.experiments_left),
                                        "sbx-score-experiments")]
        if self.model is not None:
            self._model_server = ClosedGateway(self.sock_dir / MODEL_SOCKET, self.model).start()
        self._listen()
        self.box = create_box(self.client, self.spec(cpus))
        self.box.start()
        if self._model_server is not None:  # as the run's sandbox starts it, before any agent code
            forwarder.start(self.box.container, self._model_server.path, port=forwarder.DEFAULT_PORT,
                            inside=f"{SOCK_MOUNT}/{MODEL_SOCKET}")
        with engine_errors("putting the scorer's runner in place"):
            res = self.box.container.exec_run(["timeout", "-s", "KILL", "20", "cp", f"{SOCK_MOUNT}/{RUNNER_FILE}",
                                               f"{WORKSPACE}/train.py"], user="agent", workdir=WORKSPACE)
        runner.unlink()
        if res.exit_code != 0:
            raise ScorerError(f"putting the scorer's runner in place failed (exit {res.exit_code}): "
                              f"{(res.output or b'')[:300]!r}")
        self.runner = ContainerProcess(self.box, [PYTHON, "train.py"], user="agent", workdir=WORKSPACE,
                                       env=experiment_environment(secrets.token_hex(16), self.experiment),
                                       sink=self.output, oom_counter=self.box.oom_kills)
        self.runner.start()
        self.watch = Watch(self.box, self.output, o)
        self.watch.start()

    def accept(self) -> socket.socket:
        """The runner's one connection; then the listener is closed and its path removed."""
        assert self._listener is not None
        deadline = time.monotonic() + self.options.connect_timeout_s
        self._listener.settimeout(0.2)
        try:
            while True:
                try:
                    conn, _ = self._listener.accept()
                    break
                except TimeoutError:
                    if time.monotonic() > deadline:
                        raise ScorerError(f"the scorer runner did not connect within "
                                          f"{self.options.connect_timeout_s:g}s: {self.output.snapshot()[0][-500:]}") from None
                    if not self.running():
                        raise ScorerError(f"the scorer runner exited before connecting "
                                          f"(exit {self.exit_code()}): {self.output.snapshot()[0][-500:]}") from None
        finally:
            self._close_listener()
        pid = peer_pid(conn)
        exec_pid = self.runner.pid() if self.runner is not None else 0
        if exec_pid and pid != exec_pid:
            conn.close()
            raise ScorerError(f"the scoring socket was reached by pid {pid}, not the runner (pid {exec_pid})")
        self.conn = conn
        return conn

    def _close_listener(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        with contextlib.suppress(FileNotFoundError):
            (self.sock_dir / SCORE_SOCKET).unlink()

    # --- state after the fact --------------------------------------------------------------------------

    def running(self) -> bool:
        return self.runner is not None and self.runner.state()[0]

    def exit_code(self, wait_s: float = 0.0) -> int | None:
        """The runner's exit code, waiting up to `wait_s` for it to end; None while it still runs."""
        if self.runner is None:
            return None
        end = time.monotonic() + wait_s
        while True:
            running, code = self.runner.state()
            if not running or time.monotonic() >= end:
                return None if running else code
            time.sleep(0.05)

    def oom_killed(self, exit_code: int | None) -> bool:
        """Whether the kernel's OOM killer ended the runner (the one OOM rule, sandbox/process.py)."""
        if self.runner is None:
            return False
        return self.runner.finish(exit_code).oom

    def cpu_seconds(self) -> float | None:
        """CPU time used by everything in the container so far (kernel accounting), None if unreadable."""
        if self.watch is None:
            return None
        used = self.watch.cpu()
        used = used if used is not None else self.watch.last
        return round(used, 3) if used is not None else None

    def close(self) -> None:
        """Close the connection, stop the sockets and remove the container (idempotent; never raises)."""
        if self.watch is not None:
            self.watch.stop()
        self._close_listener()
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.close()
            self.conn = None
        for server in self._servers:
            server.close()
        self._servers = []
        if self._model_server is not None:
            self._model_server.close()
            self._model_server = None
        if self.box is not None:
            self.box.remove()
            self.box = None
        if self.runner is not None:
            self.runner.join(timeout=2)
