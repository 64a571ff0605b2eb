"""The host-side experiment service of one run: the only way the agent runs a counted experiment.

`run_experiment` in the sandbox is a thin client of `experiments.sock`. The host keeps the count,
reserves a number under a lock (so concurrent calls can never pass the limit), runs `python train.py`
as the agent user in a fresh per-experiment cgroup under `py`, kills that whole cgroup at the time limit
(a `setsid` child dies with it), and records n, commit, train.py's hash, eval score, status, seconds and
CPU-seconds. Crashes, timeouts and OOMs count; refusals are recorded but not counted.

What the experiment ran is read by the host from the workspace volume as plain files (`hostfs`,
`gitread`): no git, no command in the container, so nothing the agent put in `.gitattributes`, hooks or
config runs, and nothing it stops can hang the service. The first `REFUSALS_RECORDED` refusals are
recorded one by one; past them a request that can only be refused is answered at once in the accepting
thread and counted (`on_refusals` at close), so a flood costs the host an accept and a send per request.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import secrets
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestrator.ledger.records import ExperimentStatus
from orchestrator.log import get_logger
from orchestrator.sandbox.container import Box
from orchestrator.sandbox.gitread import differs_from_commit, read_head
from orchestrator.sandbox.hostfs import HostTree
from orchestrator.sandbox.meter import EventSink, Meter, serve_unix
from orchestrator.sandbox.process import ContainerProcess, TailBuffer
from orchestrator.specs import Budget
from orchestrator.specs.tasktypes import metric_by_name

log = get_logger(__name__)

EXPERIMENT_SOCKET = "experiments.sock"
PYTHON = "/opt/sbx/venv/bin/python"
_TAIL = 4000
_TRAIN_MAX_BYTES = 1 << 20
#: refusals recorded one by one (a row and an event each); past them refusals are counted in bulk
REFUSALS_RECORDED = 100


def parse_score(pattern: re.Pattern[str], text: str) -> float | None:
    """The number the task's eval line printed, when there is one and it is finite."""
    m = pattern.search(text)
    if m is None:
        return None
    try:
        value = float(m.group(1))
    except (ValueError, IndexError):
        return None
    return value if math.isfinite(value) else None


@dataclass
class ExperimentResult:
    """One experiment request as the sandbox's service ran (or refused) it, with what only the sandbox sees
    (exit code, output tail, dirty tree); the host turns it into the ledger's `ExperimentRecord`."""

    n: int | None            # None for a refusal
    status: ExperimentStatus  # what the ledger records
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
        box: Box,
        meter: Meter,
        budget: Budget,
        eval_line: str,
        metric: str,
        sock_dir: Path,
        on_event: EventSink,
        on_record: Callable[[ExperimentResult, bytes | None], None],
        workspace: HostTree,
        on_refusals: Callable[[int, dict[str, Any]], None] | None = None,
    ) -> None:
        self.box, self.meter, self.budget = box, meter, budget
        self.workspace = workspace
        self.on_refusals = on_refusals
        self.eval_line = re.compile(eval_line)
        self.metric = metric
        self.sock_dir, self.on_event, self.on_record = sock_dir, on_event, on_record
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(budget.experiment_concurrency)
        self.counted = 0
        self.refused = 0
        self.records: list[ExperimentResult] = []
        #: refusals past REFUSALS_RECORDED, by reason (counted, not recorded one by one)
        self.bulk_refusals: Counter[str] = Counter()
        self._server: Any = None
        self._closed = False

    def start(self) -> None:
        self._server = serve_unix(self.sock_dir / EXPERIMENT_SOCKET, self._on_request, name="sbx-experiments",
                                  quick=self._quick_refusal)
        log.info("experiments.start", socket=str(self.sock_dir / EXPERIMENT_SOCKET))

    def close(self) -> None:
        with self._lock:
            self._closed = True
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            bulk, self.bulk_refusals = dict(self.bulk_refusals), Counter()
        if bulk and self.on_refusals is not None:
            try:
                self.on_refusals(sum(bulk.values()), {"reasons": bulk, "recorded_singly": REFUSALS_RECORDED})
            except Exception as exc:  # noqa: BLE001 - the count is logged; the run goes on to its end
                log.error("experiments.bulk_refusals_not_recorded", count=sum(bulk.values()), error=str(exc)[:500])

    def _refusal_reason(self) -> str:
        """Why a request now can only be refused ('' when it might run). Call with the lock held."""
        if self._closed:
            return "the run is ending"
        if self.meter.state.exhausted:
            return "the CPU budget of this run is spent"
        if self.counted >= self.budget.experiments:
            return f"all {self.budget.experiments} experiments are spent"
        return ""

    def _quick_refusal(self) -> bytes | None:
        """Past the refusals recorded one by one: answer a request that can only be refused, and count it."""
        with self._lock:
            if self.refused < REFUSALS_RECORDED:
                return None
            why = self._refusal_reason()
            if not why:
                return None
            self.refused += 1
            self.bulk_refusals[why] += 1
        return json.dumps({"n": None, "status": "refused", "counted": False, "reason": why,
                           f"eval_{self.metric}": None, "remaining": 0}).encode() + b"\n"

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
        # which way is better, so an agent that keeps its best trial (the built-in hpo) keeps the lowest RMSE
        reply["higher_is_better"] = metric_by_name(self.metric).higher_is_better
        reply["remaining"] = max(0, self.budget.experiments - self.counted)
        return json.dumps(reply).encode() + b"\n"

    # --- one experiment --------------------------------------------------------------------------------

    def _reserve(self) -> tuple[int | None, str]:
        with self._lock:
            why = self._refusal_reason()
            if why:
                self.refused += 1
                return None, why
            self.counted += 1
            return self.counted, ""

    def run(self, note: str = "") -> ExperimentResult:
        n, why = self._reserve()
        if n is None:
            record = ExperimentResult(n=None, status="refused", counted=False, reason=why, note=note, started_at=time.time())
            with self._lock:
                singly = self.refused <= REFUSALS_RECORDED
                if not singly:
                    self.bulk_refusals[why] += 1
            if singly:
                self.on_event("experiment_refused", {"reason": why})
                self._finish(record, None)
            return record
        with self._slots:
            return self._execute(n, note)

    def _snapshot(self) -> tuple[str | None, bool | None, bytes | None]:
        """HEAD's sha, whether train.py differs from HEAD, and train.py's bytes as the experiment saw them, read
        by the host as plain files (None where that cannot be known: a link, a FIFO, over 1 MiB, packed)."""
        head = read_head(self.workspace).commit
        train = self.workspace.read_file("train.py", _TRAIN_MAX_BYTES)
        body = train.data if train is not None and not train.truncated else None
        dirty = differs_from_commit(self.workspace, head, "train.py", body) if head and body is not None else None
        return head, dirty, body

    def _execute(self, n: int, note: str) -> ExperimentResult:
        commit, dirty, train_bytes = self._snapshot()
        record = ExperimentResult(n=n, status="crash", counted=True, commit_sha=commit, dirty=dirty, note=note,
                                  train_sha256=hashlib.sha256(train_bytes).hexdigest() if train_bytes is not None else None,
                                  started_at=time.time())
        cg = self.meter.py.child(f"exp-{n}")
        token = secrets.token_hex(16).encode()
        output = TailBuffer(_TAIL)
        proc = ContainerProcess(
            self.box, [PYTHON, "train.py"], user="agent", workdir="/workspace", sink=output,
            env={"SBX_GATE_TOKEN": token.decode(), "SBX_EXPERIMENT": str(n), "HOME": "/home/agent"},
            oom_counter=self.box.oom_kills,
        )

        def place(pid: int) -> str | None:
            # Only the exec's own process joins the experiment's cgroup; an impostor holding the token does not.
            # The engine records an exec's pid only after starting it, and train.py's Python can reach the gate
            # first: without the wait, under load, the experiment ran uncounted in `py` (cpu_seconds 0.0)
            # and was reported as a token misuse.
            if proc.pid(wait_s=2) != pid:
                self.on_event("experiment_token_misuse", {"n": n, "pid": pid})
                return None
            cg.add(pid)
            return cg.name

        def timeout() -> None:
            cg.kill_all()
            self.on_event("experiment_timeout", {"n": n, "limit_s": self.budget.experiment_timeout_s})

        self.meter.placements[token] = place
        proc.start()
        end = proc.wait(self.budget.experiment_timeout_s, on_timeout=timeout)
        record.seconds = end.seconds
        leftovers = cg.kill_all() if cg.pids() else 0  # children that outlived train.py (e.g. setsid) die here
        if leftovers:
            self.on_event("experiment_leftovers_killed", {"n": n, "processes": leftovers})
        self.meter.placements.pop(token, None)
        try:
            record.cpu_seconds = round(cg.usage_seconds(), 3)
        except OSError:
            pass
        cg.remove()
        record.exit_code = end.exit_code
        text = output.raw().decode(errors="replace")
        record.output_tail = output.text()
        record.eval_score = parse_score(self.eval_line, text)
        if end.timed_out:
            record.status = "timeout"
        elif end.oom:
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

    def _finish(self, record: ExperimentResult, train_bytes: bytes | None) -> None:
        with self._lock:
            self.records.append(record)
        try:
            self.on_record(record, train_bytes)
        except Exception as exc:  # noqa: BLE001 - the agent still gets its answer; the loss is an event
            log.error("experiment.record_failed", n=record.n, error=f"{type(exc).__name__}: {exc}"[:500])
            self.on_event("experiment_record_failed", {"n": record.n, "status": record.status,
                                                       "error": f"{type(exc).__name__}: {exc}"[:500]})
