"""The sandbox phase of one run: workspace, container, meter, experiment service, the agent under its
watchdog, the final readings, and the copy-out.

planned -> starting -> running -> delivered, or -> failed with the class of what ended it. Every stop,
kill and refusal is an event; every experiment is a row; every version of train.py lands in the artifact
store. Per-run services that live beside the agent (the experiment service; later the model gateway) are
`Attachment`s: started after the container, stopped before the final readings.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from orchestrator.agents import agent_environment
from orchestrator.failures import InfraError, Interrupted
from orchestrator.ledger import RunState
from orchestrator.log import get_logger
from orchestrator.run.context import RunContext
from orchestrator.run.deliver import deliver
from orchestrator.run.probes import Probe
from orchestrator.run.watchdog import Stop, StopReason, Watchdog
from orchestrator.sandbox.copyout import CopierAhead
from orchestrator.sandbox.docker import HOME, SOCK_MOUNT, DockerSandbox, SandboxSpec
from orchestrator.sandbox.events import BoundedEvents
from orchestrator.sandbox.experiments import EXPERIMENT_SOCKET, ExperimentResult, ExperimentService
from orchestrator.sandbox.hostfs import DiskUsage, HostTree
from orchestrator.sandbox.meter import Meter, agent_argv
from orchestrator.sandbox.process import CappedFile, ContainerProcess
from orchestrator.sandbox.workspace import WORKSPACE, workspace_tar

log = get_logger(__name__)

AGENT_LOG_CAP = 8 << 20
_POLL_S = 0.25
#: the workspace walk: at least every 5 s, and at most 1/20 of the host's time (a walk of 0.5 s: every 10 s)
_DISK_EVERY_S = 5.0
_DISK_MAX_SPACING_S = 30.0
_DISK_WALK_S = 5.0
_DISK_MAX_ENTRIES = 200_000
#: a fact that has not come for this long stops the run: the disk counts as over its cap; silence about
#: the agent from the engine is an infrastructure fault
_DISK_STALE_S = 60.0
_AGENT_STALE_S = 60.0


class Attachment(Protocol):
    """A per-run service beside the agent (the model gateway, ...). An attachment may also define
    `agent_ended(sandbox, stop)`, called once the agent stopped and before the final readings (the sandbox
    still runs); an error it raises ends the attempt as its type says."""

    name: str

    def start(self, ctx: RunContext, sandbox: DockerSandbox, sock_dir: Path) -> dict[str, str]:
        """Start serving this run; return environment variables the agent gets."""
        ...

    def stop(self) -> dict[str, Any]:
        """Stop serving; return measurements for the run's meta."""
        ...


def _agent_env(ctx: RunContext, extra: dict[str, str]) -> dict[str, str]:
    """The documented agent environment (docs/agents.md) plus HOME and PATH."""
    req = ctx.request
    return {
        "HOME": HOME,
        "PATH": "/opt/sbx/venv/bin:/usr/local/bin:/usr/bin:/bin",
        **agent_environment(run_id=ctx.run_id, task=req.task.name, budget=req.budget,
                            experiment_socket=f"{SOCK_MOUNT}/{EXPERIMENT_SOCKET}", seed=req.seed,
                            options=req.agent_options),
        **extra,
    }


class SandboxPhase:
    def __init__(self, ctx: RunContext, image: str, attachments: tuple[Attachment, ...] = (),
                 cancel: threading.Event | None = None) -> None:
        self.ctx, self.image, self.attachments = ctx, image, attachments
        self.cancel = cancel or threading.Event()
        self.sock_dir = ctx.home.mount_dir(f"sbx-{ctx.run_id[-8:]}-")

    def _agent_file(self, host_path: Path) -> Path:
        """The agent's file as the engine will mount it: where it is, or (with a shared mount folder) a copy
        in this run's socket folder, because the engine resolves the mount's source on its own host."""
        if self.ctx.home.shared is None:
            return host_path
        folder = self.sock_dir / "agent"
        folder.mkdir(mode=0o755)
        copy = folder / host_path.name
        shutil.copyfile(host_path, copy)
        copy.chmod(0o755)
        return copy

    def _record_experiment(self, rec: ExperimentResult, train_bytes: bytes | None) -> None:
        sha = self.ctx.store.put_bytes(train_bytes) if train_bytes is not None else None
        self.ctx.ledger.add_experiment(
            self.ctx.run_id, n=rec.n, status=rec.status, commit_sha=rec.commit_sha,
            train_sha256=sha, eval_score=rec.eval_score, seconds=rec.seconds, cpu_seconds=rec.cpu_seconds,
            started_at=rec.started_at, note=rec.note or rec.reason,
        )

    def run(self) -> None:
        ctx, req, b = self.ctx, self.ctx.request, self.ctx.request.budget
        cpuset = req.resolved_cpuset()
        ctx.ledger.update_measurements(ctx.run_id, node=req.node or socket.gethostname(), slot=req.slot)
        ctx.ledger.advance(ctx.run_id, RunState.STARTING)
        sandbox = DockerSandbox(ctx.client, SandboxSpec(
            run_id=ctx.run_id, image=self.image, budget=b, cpuset=cpuset, sock_dir=self.sock_dir,
            study_id=req.study_id or "",
            agent_mount=(self._agent_file(req.agent.host_path), req.agent.container_path or "")
            if req.agent.host_path is not None else None,  # a CLI agent is in its image
        ))
        meter: Meter | None = None
        service: ExperimentService | None = None
        started: list[Attachment] = []
        copier: CopierAhead | None = None
        events = BoundedEvents(ctx.event)  # a flood of one kind of event is counted, not written row by row
        try:
            with ctx.step("sandbox"):
                tar, start_commit = workspace_tar(req.task, b, branch=f"sbx/{ctx.run_id}", data_dir=req.data_dir)
                sandbox.create(tar)
                sandbox.start()
                assert sandbox.box is not None
                box = sandbox.box
                tree = HostTree(sandbox.workspace_host_path())
                meter = Meter(box.cgroup(), b, self.sock_dir, events, kill_container=box.kill)
                meter.start()
                if req.task.kind == "ml":  # counted experiments retrain train.py; a tests task has none
                    service = ExperimentService(box, meter, b, req.task.contract.eval_line, req.task.metric,
                                                self.sock_dir, events, self._record_experiment, workspace=tree,
                                                on_refusals=lambda n, d: ctx.ledger.add_refusals(ctx.run_id, n, d))
                    service.start()
                env: dict[str, str] = {}
                for attachment in self.attachments:
                    env |= attachment.start(ctx, sandbox, self.sock_dir)
                    started.append(attachment)
                ctx.ledger.update_measurements(
                    ctx.run_id, image=box.image_id(), resources=box.granted(), container_id=box.id,
                    meta={**req.meta, "start_commit": start_commit, "cpuset": cpuset},
                )
            ctx.ledger.advance(ctx.run_id, RunState.RUNNING)
            t0 = time.time()
            with ctx.step("agent"):
                # The agent starts through the launcher, which the meter places in `agent` before the agent's
                # own code runs: everything the agent starts is born there and counted (sandbox/meter.py).
                started_agent: list[ContainerProcess] = []
                token = meter.expect_agent(lambda: started_agent[0].pid(wait_s=2) if started_agent else 0)
                agent = ContainerProcess(box, agent_argv(req.agent.command), user="agent", workdir=WORKSPACE,
                                         env={**_agent_env(ctx, env), "SBX_GATE_TOKEN": token},
                                         sink=CappedFile(ctx.run_dir / "agent.log", AGENT_LOG_CAP),
                                         oom_counter=box.oom_kills)
                started_agent.append(agent)
                agent.start()
                ctx.event("agent_started", {"agent": req.agent.name, "command": list(req.agent.command)})
                stop, exit_code = self._watch(sandbox, meter, agent, tree)
                ctx.event("stop", {"reason": stop.reason.value, "detail": stop.detail})
                for attachment in started:
                    ended = getattr(attachment, "agent_ended", None)
                    if ended is not None:
                        ended(sandbox, stop)
            wall = time.time() - t0
            with ctx.step("final_readings"):
                # Final readings only under pause; then nothing more may enter or stay in `py`.
                paused = box.pause()
                # the copier starts meanwhile (most of a copy-out's time); it reads nothing before its go,
                # which comes once the sandbox is stopped (sandbox/copyout.py)
                copier = CopierAhead(ctx.client, sandbox.volume_name, image=self.image, limits=req.copy_limits,
                                     run_id=ctx.run_id, study_id=req.study_id or "")
                metered_s, total_s = meter.final_reading()
                meter.close_gate()
                if service is not None:
                    service.close()
                extra_meta: dict[str, Any] = {}
                for attachment in started:
                    extra_meta |= attachment.stop()
                started.clear()
                if paused:
                    meter.py.kill_all()
                    box.unpause()
                meter.remove_cgroups()
                box.kill()
                meter.stop()
                agent.join()
                dropped = events.flush()
                ctx.ledger.update_measurements(
                    ctx.run_id, wall_seconds=round(wall, 3),
                    cpu_seconds_metered=round(metered_s, 3), cpu_seconds_container=round(total_s, 3),
                    stop_reason=stop.reason.value, agent_exit_code=exit_code,
                    meta={"cpu_seconds_py": round(meter.state.py_seconds, 3),
                          "cpu_seconds_tools": round(meter.state.tools_seconds, 3),
                          "cpu_seconds_agent": round(meter.state.agent_seconds, 3),
                          "overshoot_at_kill_s": meter.state.overshoot_at_kill,
                          "hard_stop_overshoot_s": meter.state.hard_stop_overshoot,
                          "gate_admitted": meter.state.admitted, "gate_denied": meter.state.denied,
                          "agent_output_bytes": agent.sink.bytes_seen if agent.sink else 0,
                          **({"events_not_recorded": dropped} if dropped else {}), **extra_meta},
                )
            if self.cancel.is_set():  # the attempt is lost anyway (failed/infra): no copy-out
                raise Interrupted(why="the run was cancelled (its study is stopping)")
            with ctx.step("copy_out"):
                deliver(ctx, sandbox.volume_name, self.image, stop, copier)
        finally:
            if copier is not None:
                copier.discard()
            for attachment in started:
                attachment.stop()
            if service is not None:
                service.close()
            events.flush()
            if meter is not None:
                meter.stop()
                if sandbox.box is not None:
                    sandbox.box.unpause()  # interrupted under pause: a frozen container keeps its cgroups busy
                    sandbox.box.kill()
                meter.remove_cgroups()
            sandbox.remove()
            shutil.rmtree(self.sock_dir, ignore_errors=True)

    def _watch(self, sandbox: DockerSandbox, meter: Meter, agent: ContainerProcess,
               tree: HostTree) -> tuple[Stop, int | None]:
        """Wait for the first stop. Each fact comes from its own probe (run/probes.py), so a reading that never
        returns (a walk of a huge workspace, an engine call) cannot keep the other limits from being checked."""
        budget = self.ctx.request.budget
        dog = Watchdog(budget, started=time.monotonic())
        state = Probe("agent", lambda: agent.state(strict=True), _POLL_S)
        disk = Probe("disk", lambda: tree.disk_usage(max_entries=_DISK_MAX_ENTRIES, time_limit_s=_DISK_WALK_S),
                     _DISK_EVERY_S, spacing=lambda u: min(_DISK_MAX_SPACING_S, 20 * u.seconds))
        agent.on_output_end = state.nudge  # the stream's end is the usual sign the agent exited: ask now
        state.start()
        disk.start()
        try:
            next_at = time.monotonic() + _POLL_S
            while True:
                # a reading that the agent ended is acted on at once; the other facts keep their pace (the
                # watchdog's activity rule compares CPU between checks _POLL_S apart)
                state.fresh.wait(max(0.0, next_at - time.monotonic()))
                state.fresh.clear()
                seen = state.latest()
                if (seen is None or seen.value[0]) and time.monotonic() < next_at:
                    continue
                next_at = time.monotonic() + _POLL_S
                now = time.monotonic()
                if self.cancel.is_set():
                    raise Interrupted(why="the run was cancelled (its study is stopping)")
                if meter.state.hard_stopped:
                    return Stop(StopReason.HARD_STOP, f"container CPU passed {budget.hard_stop_cpu_seconds:g}s"), None
                seen = state.latest()
                if seen is not None and not seen.value[0]:
                    if not meter.agent_placed.is_set():  # the launcher ended before any agent code ran: ours
                        raise InfraError(f"the agent's launcher ended (exit {seen.value[1]}) before the meter placed it")
                    return self._agent_ended(sandbox, agent, seen.value[1])
                if state.age(now) > _AGENT_STALE_S:
                    raise InfraError(f"the engine has not said how the agent is for {state.age(now):.0f}s")
                dog.observe(now, agent.new_output(), meter.state.container_seconds)
                kb, unmeasured = _disk_fact(disk.latest(), disk.age(now))
                stop = dog.check(now, kb, unmeasured)
                if stop is not None:
                    return stop, None
        finally:
            state.stop()
            disk.stop()

    def _agent_ended(self, sandbox: DockerSandbox, agent: ContainerProcess, exit_code: int | None) -> tuple[Stop, int | None]:
        end = agent.finish(exit_code)
        if exit_code == 0:
            return Stop(StopReason.AGENT_DONE, "the agent exited 0"), 0
        if end.oom:
            return Stop(StopReason.AGENT_OOM, "the kernel's OOM killer ended the agent"), exit_code
        assert sandbox.box is not None
        if not sandbox.box.is_running():
            return Stop(StopReason.CONTAINER_DIED, "the sandbox container stopped"), exit_code
        return Stop(StopReason.AGENT_CRASHED, f"the agent exited with {exit_code}"), exit_code


def _disk_fact(reading: Any, age: float) -> tuple[int | None, str | None]:
    """(kB used, why it is unmeasured) from the disk probe's last reading and its age."""
    kb, unmeasured = None, None
    if reading is not None:
        usage: DiskUsage = reading.value
        if usage.complete:
            kb = usage.bytes // 1024
        else:
            unmeasured = usage.problem
    if age > _DISK_STALE_S:
        unmeasured = f"no measurement for {age:.0f}s"
    return kb, unmeasured


__all__ = ["AGENT_LOG_CAP", "Attachment", "SandboxPhase"]
