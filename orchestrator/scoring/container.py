"""Step A's driver on the host: one fresh scorer container, the runner exec'd in it, one socket to it.

The container: scorer image, no network, uid 1000, every capability dropped, no-new-privileges, read-only
root with small tmpfs for /tmp and the work folder, CPU, memory and pids limits, no core dumps, its log
driver off (a flood never reaches the host's disk), an environment we spell out, and one read-only bind
mount: the per-scoring host folder holding the clean repo copy and the socket. Docker SDK errors become
InfraError; the runner's misbehaviour becomes a protocol exception for the caller to classify.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import time
import uuid
from pathlib import Path
from typing import Any, Self

import docker
import docker.errors
from docker.types import LogConfig, Mount, Ulimit

from orchestrator.failures import CgroupError, ScorerError
from orchestrator.log import get_logger
from orchestrator.sandbox.cgroups import CgroupLayout, oom_kills
from orchestrator.sandbox.docker import LABEL_KIND, LABEL_OWNER, LABEL_RUN, engine_errors, owner_label
from orchestrator.sandbox.meter import peer_pid
from orchestrator.scoring.options import ScoreOptions, cpuset_size

log = get_logger(__name__)

MOUNT = "/run/sbx-score"
WORK = "/work"
REPO = f"{WORK}/repo"
OUTPUT = "/tmp/sbx-output.log"
RUNNER = "/opt/sbx/scorer/runner.py"
PYTHON = "/opt/sbx/venv/bin/python"
SOCKET_NAME = "score.sock"
INPUT_NAME = "repo"
EXIT_SIGXFSZ = 128 + 25
EXIT_SIGKILL = 128 + 9
_TAIL = 4000


def engine_cpus(client: docker.DockerClient) -> int:
    with engine_errors("asking the engine for its cores"):
        return int(client.info().get("NCPU") or os.cpu_count() or 1)


class ScorerContainer:
    """One scoring's container and its connection. Use as a context manager: leaving removes everything."""

    def __init__(self, client: docker.DockerClient, image: str, host_dir: Path, options: ScoreOptions, *,
                 run_id: str | None, dataset: str, target: str, predict: str = "predict_proba",
                 entrypoint: str = "train.py") -> None:
        self.client, self.image, self.host_dir, self.options = client, image, host_dir, options
        self.run_id, self.dataset = run_id, dataset
        self.target, self.predict, self.entrypoint = target, predict, entrypoint
        safe = re.sub(r"[^a-zA-Z0-9_.-]", "-", run_id or "adhoc")[:40]
        self.name = f"sbx-score-{safe}-{uuid.uuid4().hex[:8]}"
        self.container: Any = None
        self.exec_id: str | None = None
        self.conn: socket.socket | None = None
        self.init_pid = 0
        self.ooms_before = -1
        self._listener: socket.socket | None = None

    # --- lifecycle -----------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def labels(self) -> dict[str, str]:
        return {LABEL_KIND: "scorer", LABEL_RUN: self.run_id or "adhoc", LABEL_OWNER: owner_label(),
                "sbx.dataset": self.dataset}

    def _listen(self) -> None:
        path = self.host_dir / SOCKET_NAME
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        os.chmod(path, 0o666)  # uid 1000 in the container connects
        self._listener.listen(1)

    def start(self) -> None:
        """Listen, create and start the container, exec the runner. Returns once the runner is running."""
        o = self.options
        cpus = min(o.cpus, engine_cpus(self.client), cpuset_size(o.cpuset) if o.cpuset else o.cpus)
        tmp_mb = o.output_limit_mb + 64
        self._listen()
        with engine_errors("creating the scorer container"):
            self.container = self.client.containers.create(
                self.image, ["sleep", "infinity"], name=self.name, user="agent", working_dir=WORK,
                network_mode="none", init=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
                pids_limit=o.pids, mem_limit=f"{o.memory_mb}m", memswap_limit=f"{o.memory_mb}m",
                nano_cpus=int(cpus * 1e9), cpuset_cpus=o.cpuset, read_only=True,
                tmpfs={"/tmp": f"size={tmp_mb}m,mode=1777",
                       WORK: f"size={o.work_mb}m,uid=1000,gid=1000,mode=0700"},
                mounts=[Mount(MOUNT, str(self.host_dir), type="bind", read_only=True)],
                ulimits=[Ulimit(name="core", soft=0, hard=0)],
                log_config=LogConfig(type=LogConfig.types.NONE), labels=self.labels(), hostname="scorer",
                environment=self._environment(cpus),
            )
        with engine_errors("starting the scorer container"):
            self.container.start()
            self.container.reload()
            self.init_pid = int(self.container.attrs["State"].get("Pid") or 0)
        self.ooms_before = oom_kills(CgroupLayout.detect(), self.init_pid) if self.init_pid else -1
        with engine_errors("starting the scorer runner"):
            self.exec_id = self.client.api.exec_create(
                self.container.id, [PYTHON, "-I", RUNNER], user="agent", workdir=WORK,
                environment=self._environment(cpus),
            )["Id"]
            self.client.api.exec_start(self.exec_id, detach=True)

    def _environment(self, cpus: float) -> dict[str, str]:
        threads = str(max(1, int(cpus)))
        return {
            "PATH": "/opt/sbx/venv/bin:/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0",
            "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
            "OMP_WAIT_POLICY": "PASSIVE",
            "SBX_SCORE_SOCKET": f"{MOUNT}/{SOCKET_NAME}", "SBX_SCORE_INPUT": f"{MOUNT}/{INPUT_NAME}",
            "SBX_SCORE_REPO": REPO, "SBX_SCORE_OUTPUT": OUTPUT,
            "SBX_SCORE_OUTPUT_LIMIT": str(self.options.output_limit_mb << 20),
            "SBX_SCORE_TARGET": self.target, "SBX_SCORE_PREDICT": self.predict,
            "SBX_SCORE_ENTRYPOINT": self.entrypoint,
        }

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
                                          f"{self.options.connect_timeout_s:g}s: {self.output_tail()}") from None
                    if not self.running():
                        raise ScorerError(f"the scorer runner exited before connecting "
                                          f"(exit {self.exit_code()}): {self.output_tail()}") from None
        finally:
            self._close_listener()
        pid = peer_pid(conn)
        exec_pid = self._exec_pid()
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
            (self.host_dir / SOCKET_NAME).unlink()

    def _exec_pid(self) -> int:
        for _ in range(50):
            with engine_errors("inspecting the scorer runner"):
                pid = int(self.client.api.exec_inspect(self.exec_id).get("Pid") or 0)
            if pid:
                return pid
            time.sleep(0.02)
        return 0

    # --- state after the fact --------------------------------------------------------------------------

    def running(self) -> bool:
        try:
            info = self.client.api.exec_inspect(self.exec_id)
        except docker.errors.APIError:
            return False
        return bool(info.get("Running")) or not info.get("Pid")

    def exit_code(self, wait_s: float = 0.0) -> int | None:
        """The runner's exit code, waiting up to `wait_s` for it to end; None while it still runs."""
        end = time.monotonic() + wait_s
        while True:
            try:
                info = self.client.api.exec_inspect(self.exec_id)
            except docker.errors.APIError:
                return None
            if not info.get("Running") and info.get("Pid"):
                code = info.get("ExitCode")
                return int(code) if code is not None else None
            if time.monotonic() >= end:
                return None
            time.sleep(0.05)

    def oom_killed(self) -> bool | None:
        """Whether the kernel's OOM killer struck in this container (None if the counter is unreadable)."""
        if not self.init_pid or self.ooms_before < 0:
            return None
        after = oom_kills(CgroupLayout.detect(), self.init_pid)
        return None if after < 0 else after > self.ooms_before

    def cpu_seconds(self) -> float | None:
        """CPU time used by everything in the container so far (kernel accounting), None if unreadable."""
        if not self.init_pid:
            return None
        try:
            return round(CgroupLayout.detect().node_of_pid(self.init_pid).usage_seconds(), 3)
        except (OSError, CgroupError):
            return None

    def output_facts(self) -> tuple[int | None, str]:
        """Size of the scored code's output file and its last few KB, read inside the container (capped)."""
        script = f"stat -c %s {OUTPUT}; tail -c {_TAIL} -- {OUTPUT}"
        try:
            res = self.container.exec_run(["timeout", "-s", "KILL", "5", "sh", "-c", script], user="agent",
                                          demux=False)
        except (docker.errors.APIError, OSError) as exc:
            return None, f"(output unavailable: {getattr(exc, 'explanation', None) or exc})"
        text = (res.output or b"")[: _TAIL + 64].decode(errors="replace")
        first, _, rest = text.partition("\n")
        try:
            return int(first.strip()), rest
        except ValueError:
            return None, text

    def output_head(self) -> str:
        """The first few KB of the scored code's output (where train.py prints its eval score)."""
        try:
            res = self.container.exec_run(["timeout", "-s", "KILL", "5", "head", "-c", str(_TAIL), "--", OUTPUT],
                                          user="agent", demux=False)
        except (docker.errors.APIError, OSError):
            return ""
        return (res.output or b"")[:_TAIL].decode(errors="replace")

    def output_tail(self) -> str:
        return self.output_facts()[1]

    def close(self) -> None:
        """Close the connection and remove the container (idempotent; never raises)."""
        self._close_listener()
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.close()
            self.conn = None
        if self.container is not None:
            for _ in range(3):
                try:
                    self.container.remove(force=True)
                    break
                except docker.errors.NotFound:
                    break
                except docker.errors.APIError as exc:
                    log.warning("scorer.remove_retry", container=self.name, error=str(exc))
                    time.sleep(0.5)
            self.container = None
