"""Stop conditions of a run, and what each stop means for the attempt.

The watchdog is pure: it is fed observations by the run loop and answers with a stop, so every rule is
tested without a container. Each stop becomes an event with its reason. Every observation comes from the
host (output bytes counted by the host's reader, CPU from the host's cgroup counters, disk use walked on
the host's side of the workspace volume), each gathered apart (run/probes.py), so no single stuck
operation stops the others from being checked; a workspace that cannot be measured counts as over its cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from orchestrator.specs import Budget


class StopReason(StrEnum):
    AGENT_DONE = "agent_done"            # the agent exited 0
    AGENT_CRASHED = "agent_crashed"      # the agent exited non-zero
    AGENT_OOM = "agent_oom"              # the kernel's OOM killer took the agent
    WALL_CLOCK = "wall_clock"
    STALL = "stall"                      # no output and no CPU for stall_seconds
    DISK_CAP = "disk_cap"                # the workspace grew past disk_mb
    HARD_STOP = "hard_stop"              # the container's CPU total passed the hard stop; it was killed
    CONTAINER_DIED = "container_died"    # the sandbox ended under us (not by our kill)


#: stop reason -> failure class of the attempt (None: a normal delivery, scored and audited)
OUTCOME: dict[StopReason, str | None] = {
    StopReason.AGENT_DONE: None,
    StopReason.AGENT_CRASHED: "agent",
    StopReason.AGENT_OOM: "agent",
    StopReason.WALL_CLOCK: "agent",
    StopReason.STALL: "agent",
    StopReason.DISK_CAP: "agent",
    StopReason.HARD_STOP: "agent",
    StopReason.CONTAINER_DIED: "agent",
}


@dataclass
class Stop:
    reason: StopReason
    detail: str


@dataclass
class Watchdog:
    budget: Budget
    started: float
    last_activity: float = 0.0
    last_cpu: float = 0.0

    def __post_init__(self) -> None:
        self.last_activity = self.started

    def observe(self, now: float, output_bytes_seen: bool, container_cpu: float) -> None:
        """Record activity: new agent output, or CPU progress of more than a tenth of a second."""
        if output_bytes_seen or container_cpu - self.last_cpu > 0.1:
            self.last_activity = now
        self.last_cpu = max(self.last_cpu, container_cpu)

    def check(self, now: float, workspace_kb: int | None = None, unmeasured: str | None = None) -> Stop | None:
        """The stop due at `now`, if any. `workspace_kb` is the workspace's latest measured use; `unmeasured`
        says why the workspace could not be measured (it then counts as over the cap)."""
        elapsed = now - self.started
        if elapsed > self.budget.wall_clock_minutes * 60:
            return Stop(StopReason.WALL_CLOCK, f"wall clock of {self.budget.wall_clock_minutes:g} min reached")
        idle = now - self.last_activity
        if idle > self.budget.stall_seconds:
            return Stop(StopReason.STALL, f"no output and no CPU for {idle:.0f}s (limit {self.budget.stall_seconds:g}s)")
        if workspace_kb is not None and workspace_kb > self.budget.disk_mb * 1024:
            return Stop(StopReason.DISK_CAP, f"workspace uses {workspace_kb // 1024} MB (cap {self.budget.disk_mb} MB)")
        if unmeasured:
            return Stop(StopReason.DISK_CAP, f"the workspace could not be measured ({unmeasured}); "
                                             f"counted as over the cap of {self.budget.disk_mb} MB")
        return None
