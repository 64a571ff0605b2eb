"""What every step of one run shares: where state goes, the engine, the request, and a way to record events."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker

from orchestrator.artifacts import ArtifactStore
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.log import get_logger
from orchestrator.run.request import RunRequest

log = get_logger(__name__)


@dataclass
class RunContext:
    home: Home
    ledger: Ledger
    client: docker.DockerClient
    request: RunRequest
    run_id: str
    store: ArtifactStore = field(init=False)
    #: name -> seconds, for every step this process ran (recorded in the run's meta at the end)
    timings: dict[str, float] = field(default_factory=dict)
    #: artifacts beyond the copy-out that the run's manifest names (name -> sha256; the model transcript)
    artifacts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.store = ArtifactStore(self.home.artifacts_dir)

    @property
    def run_dir(self) -> Path:
        path = self.home.run_dir(self.run_id)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def event(self, kind: str, detail: dict[str, Any]) -> None:
        self.ledger.add_event(self.run_id, kind, detail)

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        """One step of the lifecycle: timed, logged as `run.step` and recorded as a `step` event."""
        start = time.monotonic()
        outcome = "ok"
        try:
            yield
        except BaseException as exc:
            outcome = type(exc).__name__
            raise
        finally:
            seconds = round(time.monotonic() - start, 3)
            self.timings[name] = seconds
            log.info("run.step", run_id=self.run_id, step=name, outcome=outcome, seconds=seconds)
            with contextlib.suppress(Exception):  # a ledger that cannot take the event must not hide the outcome
                self.event("step", {"step": name, "outcome": outcome, "seconds": seconds})
