"""Where a study's runs execute. A backend offers slots (a node and a CPU set each) and runs one job per
slot at a time; the driver decides what runs next and alone writes the ledger (the local backend writes
through the driver's own ledger; the Ray backend returns each run's records to the driver)."""

from __future__ import annotations

import importlib
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from orchestrator.failures import ConfigError
from orchestrator.tasks.bundle import TaskBundle


@dataclass(frozen=True)
class Slot:
    node: str
    index: int      # slot number on its node
    cpuset: str     # e.g. "0-1"

    @property
    def label(self) -> str:
        return f"{self.node}#{self.index}"


@dataclass(frozen=True)
class RunJob:
    """Everything a node needs to execute one planned attempt and score it."""

    study_id: str
    study_name: str
    run_id: str
    pairing: str
    agent: str | None
    agent_command: str | None
    model: str | None
    repeat: int
    seed: int
    task: str
    budget: str
    datasets: tuple[str, ...]
    data_dir: str | None = None
    phase: str = "run"            # run | finish (scoring/audit left over after a crash)
    options: dict[str, Any] = field(default_factory=dict)
    #: the model endpoint of the pairing, and where the node reads endpoints and rate cards (never keys)
    endpoint: str | None = None
    endpoints_file: str | None = None
    ratecards_dir: str | None = None
    #: the task and budget as the driver validated them, with their digests (study/job.py): a node runs
    #: these, never its own copies of `task` / `budget` by name (None: loaded by name, for callers that
    #: build jobs by hand)
    task_bundle: TaskBundle | None = None
    budget_spec: dict[str, Any] | None = None
    budget_digest: str | None = None
    #: the judge of the run (JudgeSpec as JSON): the study's, else its task's; None: no judge
    judge: dict[str, Any] | None = None
    #: JudgeSpec.digest() of `judge` as the driver validated it: the node checks it (study/job.py), so every
    #: verdict's `spec_sha256` names the judge the study was planned with (its calibration is by digest)
    judge_digest: str | None = None


@dataclass(frozen=True)
class JobResult:
    """What a backend hands the driver when one job (one attempt at a run) ends: the run's state, where it
    ran and how long it took. The run's pass/fail grading is the ledger's `GradedOutcome`, not this."""

    run_id: str
    status: str
    failure_class: str | None
    failure_reason: str | None
    slot: str
    seconds: float
    cpu_seconds: float | None = None
    #: the run's endpoint when, as the run ended, it kept refusing (the driver stops launching runs on it)
    endpoint_refusing: str | None = None


class Backend(Protocol):
    name: str

    def slots(self) -> list[Slot]: ...
    def alive(self, slot: Slot) -> bool: ...   # False once the slot's node is gone: the driver drops it
    def submit(self, job: RunJob, slot: Slot) -> Future[JobResult]: ...
    def interrupt(self) -> None: ...           # the driver is stopping: end the runs in flight (failed/infra)
    def close(self) -> None: ...


_BACKENDS = {
    "local": "orchestrator.study.local:LocalBackend",
    "ray": "orchestrator.study.ray_backend:RayBackend",
}


def backend_class(kind: str) -> Any:
    """The backend class for a `type` tag; optional SDKs load only when chosen."""
    if kind not in _BACKENDS:
        raise ConfigError(f"unknown backend {kind!r}; known: {', '.join(_BACKENDS)}")
    module, _, name = _BACKENDS[kind].partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ConfigError(f"backend {kind!r} needs {exc.name}: pip install 'sbx[fleet]'") from None
