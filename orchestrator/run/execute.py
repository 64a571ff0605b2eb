"""Execute one run end to end and record it in the ledger.

planned -> starting -> running -> delivered (or failed with a class). Scoring and auditing follow in
their own modules. Every stop, kill and refusal is an event; every experiment is a row; every version
of train.py lands in the artifact store.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors

from orchestrator import paths
from orchestrator.engine import exec_stream
from orchestrator.agents import AgentSpec, agent_environment
from orchestrator.artifacts import ArtifactStore
from orchestrator.failures import ConfigError, InfraError, SbxError
from orchestrator.ledger import Ledger, RunState
from orchestrator.log import get_logger
from orchestrator.run.watchdog import OUTCOME, Stop, StopReason, Watchdog
from orchestrator.sandbox.cgroups import CgroupLayout, oom_kills
from orchestrator.sandbox.copyout import CopyLimits, copy_out_workspace
from orchestrator.sandbox.docker import (
    LABEL_OWNER,
    LABEL_RUN,
    LABEL_STUDY,
    SOCK_MOUNT,
    DockerSandbox,
    SandboxSpec,
    engine_errors,
    owner_label,
)
from orchestrator.sandbox.experiments import EXPERIMENT_SOCKET, ExperimentRecord, ExperimentService
from orchestrator.sandbox.meter import Meter
from orchestrator.sandbox.workspace import WORKSPACE, workspace_tar
from orchestrator.specs import Budget, TaskSpec

log = get_logger(__name__)

_AGENT_LOG_CAP = 8 << 20
_POLL_S = 0.25
_DISK_EVERY_S = 5.0


@dataclass
class RunRequest:
    task: TaskSpec
    budget: Budget
    agent: AgentSpec
    image: str
    study_id: str | None = None
    pairing: str | None = None
    model: str | None = None
    repeat: int | None = None   # None: the next free repeat of this pairing (ad-hoc runs)
    seed: int = 0
    cpuset: str | None = None
    data_dir: Path | None = None
    slot: int | None = None
    node: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def default_cpuset(cores: int) -> str:
    """The first `cores` CPUs this process may use, as a cpuset string."""
    cpus = sorted(os.sched_getaffinity(0))
    if cores > len(cpus):
        raise ConfigError(f"the budget asks for {cores} cores but this machine offers {len(cpus)}")
    return ",".join(str(c) for c in cpus[:cores])


def _agent_env(req: RunRequest, run_id: str) -> dict[str, str]:
    """The documented agent environment (docs/agents.md) plus HOME and PATH."""
    return {
        "HOME": "/home/agent",
        "PATH": "/opt/sbx/venv/bin:/usr/local/bin:/usr/bin:/bin",
        **agent_environment(run_id=run_id, task=req.task.name, budget=req.budget,
                            experiment_socket=f"{SOCK_MOUNT}/{EXPERIMENT_SOCKET}", seed=req.seed),
    }


class _AgentProcess:
    """The agent, run with `docker exec` as the agent user; its output streams to a capped log file."""

    def __init__(self, client: docker.DockerClient, container: Any, cmd: list[str], env: dict[str, str], log_path: Path):
        self.client = client
        self.api = client.api
        self.exec_id = self.api.exec_create(container.id, cmd, user="agent", workdir=WORKSPACE, environment=env)["Id"]
        self.log_path = log_path
        self.bytes_out = 0
        self._seen = 0
        self._thread = threading.Thread(target=self._pump, name="sbx-agent-log", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _pump(self) -> None:
        with open(self.log_path, "wb") as f:
            try:
                for chunk in exec_stream(self.client, self.exec_id):
                    if self.bytes_out < _AGENT_LOG_CAP:
                        f.write(chunk[: _AGENT_LOG_CAP - self.bytes_out])
                        f.flush()
                    self.bytes_out += len(chunk)
            except (docker.errors.APIError, OSError):
                pass
            if self.bytes_out > _AGENT_LOG_CAP:
                f.write(f"\n[sbx: {self.bytes_out - _AGENT_LOG_CAP} more bytes of output not kept]\n".encode())

    def new_output(self) -> bool:
        seen, self._seen = self._seen, self.bytes_out
        return self.bytes_out > seen

    def state(self) -> tuple[bool, int | None]:
        """(running, exit code)."""
        try:
            info = self.api.exec_inspect(self.exec_id)
        except docker.errors.APIError:
            return False, None
        running = bool(info.get("Running")) or not info.get("Pid")
        return running, None if running else info.get("ExitCode")

    def join(self, timeout: float = 5) -> None:
        self._thread.join(timeout)


def execute_run(client: docker.DockerClient, ledger: Ledger, req: RunRequest, run_id: str | None = None) -> str:
    """Run one attempt to its end; returns the run id. Infra faults end the attempt as `failed/infra`."""
    if run_id is None:
        run_id = ledger.new_run(
            study_id=req.study_id, pairing=req.pairing or req.agent.name, agent=req.agent.name, model=req.model,
            task=req.task.name, budget_name=req.budget.name, repeat=req.repeat, meta=req.meta,
        )
    ledger.update_measurements(run_id, node=req.node or socket.gethostname(), slot=req.slot)
    try:
        _Run(client, ledger, req, run_id).execute()
    except SbxError as exc:
        _fail(ledger, run_id, exc.failure_class if exc.failure_class in ("infra", "agent", "unscorable") else "infra", str(exc))
    except (docker.errors.DockerException, OSError) as exc:
        _fail(ledger, run_id, "infra", f"{type(exc).__name__}: {exc}")
    return run_id


def _fail(ledger: Ledger, run_id: str, failure_class: str, reason: str) -> None:
    log.warning("run.failed", run_id=run_id, failure_class=failure_class, reason=reason[:500])
    record = ledger.get_run(run_id)
    if record.status not in (RunState.FAILED, RunState.CANCELLED, RunState.AUDITED):
        ledger.advance(run_id, RunState.FAILED, failure_class=failure_class, reason=reason[:2000])


class _Run:
    def __init__(self, client: docker.DockerClient, ledger: Ledger, req: RunRequest, run_id: str) -> None:
        self.client, self.ledger, self.req, self.run_id = client, ledger, req, run_id
        self.budget: Budget = req.budget
        self.store = ArtifactStore()
        self.run_dir = paths.sbx_home() / "runs" / run_id
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.sock_dir = Path(tempfile.mkdtemp(prefix=f"sbx-{run_id[-8:]}-", dir=paths.shared_dir() or "/tmp"))
        os.chmod(self.sock_dir, 0o755)
        self.agent_file = self._agent_file(req.agent.host_path)

    def _agent_file(self, host_path: Path) -> Path:
        """The agent's file as the engine will mount it: where it is, or (with $SBX_SHARED_DIR) a copy in
        this run's folder there, because the engine resolves the mount's source on its own host."""
        if paths.shared_dir() is None:
            return host_path
        folder = self.sock_dir / "agent"
        folder.mkdir(mode=0o755)
        copy = folder / host_path.name
        shutil.copyfile(host_path, copy)
        copy.chmod(0o755)
        return copy

    def event(self, kind: str, detail: dict[str, Any]) -> None:
        self.ledger.add_event(self.run_id, kind, detail)

    def record_experiment(self, rec: ExperimentRecord, train_bytes: bytes | None) -> None:
        sha = self.store.put_bytes(train_bytes) if train_bytes is not None else None
        self.ledger.add_experiment(
            self.run_id, n=rec.n, status=rec.status, commit_sha=rec.commit_sha,
            train_sha256=sha, eval_score=rec.eval_score, seconds=rec.seconds, cpu_seconds=rec.cpu_seconds,
            started_at=rec.started_at, note=rec.note or rec.reason,
        )

    def execute(self) -> None:
        req, b = self.req, self.budget
        cpuset = req.cpuset or default_cpuset(b.cores)
        self.ledger.advance(self.run_id, RunState.STARTING)
        tar, start_commit = workspace_tar(req.task, b, branch=f"sbx/{self.run_id}", data_dir=req.data_dir)
        sandbox = DockerSandbox(self.client, SandboxSpec(
            run_id=self.run_id, image=req.image, budget=b, cpuset=cpuset, sock_dir=self.sock_dir,
            study_id=req.study_id or "", agent_mount=(self.agent_file, req.agent.container_path),
        ))
        meter: Meter | None = None
        service: ExperimentService | None = None
        t0 = time.time()
        try:
            sandbox.create(tar)
            pid = sandbox.start()
            layout = CgroupLayout.detect()
            meter = Meter(layout.node_of_pid(pid), b, self.sock_dir, self.event, kill_container=sandbox.kill)
            meter.start()
            service = ExperimentService(
                self.client, sandbox.container, pid, layout, meter, b, req.task.contract.eval_line, req.task.metric,
                self.sock_dir, self.event, self.record_experiment,
            )
            service.start()
            self.ledger.update_measurements(
                self.run_id, image=sandbox.image_digest(), resources=sandbox.granted(),
                container_id=sandbox.container.id, meta={**req.meta, "start_commit": start_commit, "cpuset": cpuset},
            )
            self.ledger.advance(self.run_id, RunState.RUNNING)
            with engine_errors("starting the agent"):
                agent = _AgentProcess(self.client, sandbox.container, list(req.agent.command),
                                      _agent_env(req, self.run_id), self.run_dir / "agent.log")
                agent.start()
            self.event("agent_started", {"agent": req.agent.name, "command": list(req.agent.command)})
            stop, exit_code = self._watch(sandbox, meter, agent, layout, pid, t0)
            self.event("stop", {"reason": stop.reason.value, "detail": stop.detail})
            wall = time.time() - t0
            # Final readings only under pause; then nothing more may enter or stay in `py`.
            paused = sandbox.pause()
            py_s, total_s = meter.final_reading()
            meter.close_gate()
            service.close()
            if paused:
                meter.py.kill_all()
                sandbox.unpause()
            meter.remove_cgroups()
            sandbox.kill()
            meter.stop()
            agent.join()
            self.ledger.update_measurements(
                self.run_id, wall_seconds=round(wall, 3),
                cpu_seconds_metered=round(py_s, 3), cpu_seconds_container=round(total_s, 3),
                stop_reason=stop.reason.value, agent_exit_code=exit_code,
                meta={"overshoot_at_kill_s": meter.state.overshoot_at_kill,
                      "hard_stop_overshoot_s": meter.state.hard_stop_overshoot,
                      "gate_admitted": meter.state.admitted, "gate_denied": meter.state.denied,
                      "agent_output_bytes": agent.bytes_out},
            )
            self._deliver(sandbox, stop)
        finally:
            if service is not None:
                service.close()
            if meter is not None:
                meter.stop()
                if sandbox.container is not None:
                    sandbox.kill()
                meter.remove_cgroups()
            sandbox.remove()
            shutil.rmtree(self.sock_dir, ignore_errors=True)

    def _watch(self, sandbox: DockerSandbox, meter: Meter, agent: _AgentProcess, layout: CgroupLayout,
               pid: int, t0: float) -> tuple[Stop, int | None]:
        dog = Watchdog(self.budget, started=time.monotonic())
        ooms_before = oom_kills(layout, pid)
        last_disk = 0.0
        while True:
            time.sleep(_POLL_S)
            now = time.monotonic()
            if meter.state.hard_stopped:
                return Stop(StopReason.HARD_STOP, f"container CPU passed {self.budget.hard_stop_cpu_seconds:g}s"), None
            running, exit_code = agent.state()
            if not running:
                if exit_code == 0:
                    return Stop(StopReason.AGENT_DONE, "the agent exited 0"), 0
                if exit_code == 137 and oom_kills(layout, pid) > ooms_before >= 0:
                    return Stop(StopReason.AGENT_OOM, "the kernel's OOM killer ended the agent"), exit_code
                if not sandbox.is_running():
                    return Stop(StopReason.CONTAINER_DIED, "the sandbox container stopped"), exit_code
                return Stop(StopReason.AGENT_CRASHED, f"the agent exited with {exit_code}"), exit_code
            dog.observe(now, agent.new_output(), meter.state.container_seconds)
            disk = None
            if now - last_disk >= _DISK_EVERY_S:
                last_disk = now
                disk = sandbox.workspace_kb()
            stop = dog.check(now, disk)
            if stop is not None:
                return stop, None

    def _deliver(self, sandbox: DockerSandbox, stop: Stop) -> None:
        result = copy_out_workspace(self.client, sandbox.volume_name, self.run_dir / "delivered",
                                    image=self.req.image, limits=CopyLimits(),
                                    labels={LABEL_RUN: self.run_id, LABEL_STUDY: self.req.study_id or "",
                                            LABEL_OWNER: owner_label()})
        versions = {commit: self.store.put_file(result.train_path(sha)) for commit, sha in result.train_versions.items()
                    if result.train_path(sha).is_file()}
        agent_log = self.run_dir / "agent.log"
        manifest = {
            "run_id": self.run_id,
            "copy_out": {k: v for k, v in result.to_json().items() if k not in ("dest_dir", "workspace_dir", "train_dir", "bundle_path")},
            "train_versions": versions,
            "delivered_train_sha256": result.delivered_sha256,
            "worktree_train_sha256": result.worktree_train_sha256,
            "bundle_sha256": self.store.put_file(result.bundle_path) if result.bundle_path else None,
            "agent_log_sha256": self.store.put_file(agent_log) if agent_log.exists() else None,
        }
        self.ledger.update_measurements(
            self.run_id, delivered_sha256=result.delivered_sha256, commits=result.commits,
            artifact_manifest=self.store.put_manifest(manifest),
        )
        if result.skipped_counts:
            self.event("copyout_skipped", {"counts": dict(result.skipped_counts), "truncated": result.truncated,
                                           "first": [s.path for s in result.skipped[:20]]})
        failure = OUTCOME[stop.reason]
        if failure is None and result.delivered_sha256 is None:
            failure, stop = "agent", Stop(stop.reason, "no committed train.py was delivered")
        if failure is None:
            self.ledger.advance(self.run_id, RunState.DELIVERED)
        else:
            self.ledger.advance(self.run_id, RunState.FAILED, failure_class=failure, reason=f"{stop.reason.value}: {stop.detail}")
