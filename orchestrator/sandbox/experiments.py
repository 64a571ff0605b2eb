"""The host-side experiment service of one run: the only way the agent runs a counted experiment.

`run_experiment` in the sandbox is a thin client of `experiments.sock`. The host keeps the count,
reserves a number under a lock (so concurrent calls can never pass the limit), runs `python train.py`
as the agent user in a fresh per-experiment cgroup under `py`, kills that whole cgroup at the time limit
(a `setsid` child dies with it), and records n, commit, train.py's hash, eval score, status, seconds and
CPU-seconds. Crashes, timeouts and OOMs count; refusals are recorded but not counted.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import docker
import docker.errors

from orchestrator.engine import exec_stream
from orchestrator.log import get_logger
from orchestrator.sandbox.cgroups import CgroupLayout, oom_kills
from orchestrator.sandbox.meter import EventSink, Meter, serve_unix
from orchestrator.specs import Budget

log = get_logger(__name__)

EXPERIMENT_SOCKET = "experiments.sock"
PYTHON = "/opt/sbx/venv/bin/python"
_TAIL = 4000
_TRAIN_MAX_BYTES = 1 << 20


@dataclass
class ExperimentRecord:
    n: int | None            # None for a refusal
    status: str              # ok | crash | timeout | oom | refused
    counted: bool
    commit_sha: str | None = None
    dirty: bool | None = None
    train_sha256: str | None = None
    eval_score: float | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    exit_code: int | None = None
    started_at: float = 0.0
    note: str = ""
    reason: str = ""
    output_tail: str = ""


class ExperimentService:
    def __init__(
        self,
        client: docker.DockerClient,
        container: Any,
        container_pid: int,
        layout: CgroupLayout,
        meter: Meter,
        budget: Budget,
        eval_line: str,
        metric: str,
        sock_dir: Path,
        on_event: EventSink,
        on_record: Callable[[ExperimentRecord, bytes | None], None],
    ) -> None:
        self.client, self.container, self.container_pid = client, container, container_pid
        self.layout, self.meter, self.budget = layout, meter, budget
        self.eval_line = re.compile(eval_line)
        self.metric = metric
        self.sock_dir, self.on_event, self.on_record = sock_dir, on_event, on_record
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(budget.experiment_concurrency)
        self.counted = 0
        self.refused = 0
        self.records: list[ExperimentRecord] = []
        self._server = None
        self._closed = False

    def start(self) -> None:
        self._server = serve_unix(self.sock_dir / EXPERIMENT_SOCKET, self._on_request, name="sbx-experiments")

    def close(self) -> None:
        with self._lock:
            self._closed = True
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # --- protocol ------------------------------------------------------------------------------------

    def _on_request(self, _conn: socket.socket, line: bytes) -> bytes:
        try:
            request = json.loads(line or b"{}")
            note = str(request.get("note", ""))[:500] if isinstance(request, dict) else ""
            op = request.get("op") if isinstance(request, dict) else None
        except (ValueError, UnicodeDecodeError):
            op, note = None, ""
        if op != "run":
            return json.dumps({"status": "refused", "reason": "unknown request; send {\"op\": \"run\"}"}).encode() + b"\n"
        record = self.run(note)
        reply = {k: v for k, v in asdict(record).items() if k not in ("started_at",)}
        reply[f"eval_{self.metric}"] = record.eval_score  # the task's metric by name, e.g. eval_auc
        reply["remaining"] = max(0, self.budget.experiments - self.counted)
        return json.dumps(reply).encode() + b"\n"

    # --- one experiment --------------------------------------------------------------------------------

    def _reserve(self) -> tuple[int | None, str]:
        with self._lock:
            if self._closed:
                return None, "the run is ending"
            if self.meter.state.exhausted:
                return None, "the CPU budget of this run is spent"
            if self.counted >= self.budget.experiments:
                return None, f"all {self.budget.experiments} experiments are spent"
            self.counted += 1
            return self.counted, ""

    def run(self, note: str = "") -> ExperimentRecord:
        n, why = self._reserve()
        if n is None:
            with self._lock:
                self.refused += 1
            record = ExperimentRecord(n=None, status="refused", counted=False, reason=why, note=note, started_at=time.time())
            self.on_event("experiment_refused", {"reason": why})
            self._finish(record, None)
            return record
        with self._slots:
            return self._execute(n, note)

    def _exec_text(self, cmd: list[str]) -> tuple[int, bytes]:
        result = self.container.exec_run(cmd, user="agent", workdir="/workspace", demux=False)
        return result.exit_code, result.output or b""

    def _snapshot(self) -> tuple[str | None, bool | None, bytes | None]:
        """HEAD's sha, whether train.py differs from HEAD, and train.py's bytes as the experiment saw them."""
        git = ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]
        code, out = self._exec_text([*git, "rev-parse", "--verify", "-q", "HEAD"])
        commit = out.decode(errors="replace").strip() if code == 0 else None
        code_diff, _ = self._exec_text([*git, "diff", "--quiet", "HEAD", "--", "train.py"])
        code_cat, body = self._exec_text(["head", "-c", str(_TRAIN_MAX_BYTES), "--", "train.py"])
        return commit, (code_diff != 0) if commit else None, body if code_cat == 0 else None

    def _execute(self, n: int, note: str) -> ExperimentRecord:
        commit, dirty, train_bytes = self._snapshot()
        record = ExperimentRecord(n=n, status="crash", counted=True, commit_sha=commit, dirty=dirty, note=note,
                                  train_sha256=hashlib.sha256(train_bytes).hexdigest() if train_bytes is not None else None,
                                  started_at=time.time())
        cg = self.meter.py.child(f"exp-{n}")
        token = secrets.token_hex(16).encode()
        api = self.client.api
        exec_id = api.exec_create(
            self.container.id, [PYTHON, "train.py"], user="agent", workdir="/workspace",
            environment={"SBX_GATE_TOKEN": token.decode(), "SBX_EXPERIMENT": str(n), "HOME": "/home/agent"},
        )["Id"]

        def place(pid: int) -> str | None:
            # Only the exec's own process joins the experiment's cgroup; an impostor holding the token does not.
            if api.exec_inspect(exec_id).get("Pid") != pid:
                self.on_event("experiment_token_misuse", {"n": n, "pid": pid})
                return None
            cg.add(pid)
            return cg.name

        self.meter.placements[token] = place
        ooms_before = oom_kills(self.layout, self.container_pid)
        output = bytearray()
        total_out = 0

        def reader() -> None:
            nonlocal total_out
            try:
                for chunk in exec_stream(self.client, exec_id):
                    total_out += len(chunk)
                    output.extend(chunk)
                    del output[:-_TAIL]
            except (docker.errors.APIError, OSError):
                pass

        start = time.monotonic()
        thread = threading.Thread(target=reader, name=f"sbx-exp-{n}", daemon=True)
        thread.start()
        timed_out = False
        info: dict[str, Any] = {}
        while True:
            time.sleep(0.05)
            info = api.exec_inspect(exec_id)
            if info.get("Pid") and not info.get("Running"):
                break
            if time.monotonic() - start > self.budget.experiment_timeout_s:
                timed_out = True
                cg.kill_all()
                self.on_event("experiment_timeout", {"n": n, "limit_s": self.budget.experiment_timeout_s})
                deadline = time.monotonic() + 10
                while api.exec_inspect(exec_id).get("Running") and time.monotonic() < deadline:
                    time.sleep(0.05)
                info = api.exec_inspect(exec_id)
                break
        record.seconds = round(time.monotonic() - start, 3)
        leftovers = cg.kill_all() if cg.pids() else 0  # children that outlived train.py (e.g. setsid) die here
        if leftovers:
            self.on_event("experiment_leftovers_killed", {"n": n, "processes": leftovers})
        thread.join(timeout=5)
        self.meter.placements.pop(token, None)
        try:
            record.cpu_seconds = round(cg.usage_seconds(), 3)
        except OSError:
            pass
        cg.remove()
        record.exit_code = info.get("ExitCode")
        text = output.decode(errors="replace")
        record.output_tail = text[-_TAIL:]
        if total_out > _TAIL:
            record.output_tail = f"[{total_out - _TAIL} bytes cut]\n" + record.output_tail
        m = self.eval_line.search(text)
        record.eval_score = float(m.group(1)) if m else None
        ooms_after = oom_kills(self.layout, self.container_pid)
        if timed_out:
            record.status = "timeout"
        elif ooms_after > ooms_before >= 0 and record.exit_code not in (0, None):
            record.status = "oom"
        elif record.exit_code == 0:
            record.status = "ok"
        else:
            record.status = "crash"
            if self.meter.state.exhausted:
                record.reason = "killed: the CPU budget of this run is spent"
        self._finish(record, train_bytes)
        log.info("experiment.done", n=n, status=record.status, eval_score=record.eval_score,
                 seconds=record.seconds, cpu_seconds=record.cpu_seconds)
        return record

    def _finish(self, record: ExperimentRecord, train_bytes: bytes | None) -> None:
        with self._lock:
            self.records.append(record)
        self.on_record(record, train_bytes)
