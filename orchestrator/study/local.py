"""The local backend: N sandboxes at once on this machine, each on its own fixed set of cores."""

from __future__ import annotations

import os
import socket
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import docker
import psutil

from orchestrator.failures import ConfigError
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.specs import Budget
from orchestrator.study.backend import JobResult, RunJob, Slot
from orchestrator.study.job import execute_job

#: memory kept for the host, the engine and the scorer beside the sandboxes
_HOST_RESERVE_MB = 1024


def capacity(budget: Budget, cpus: list[int] | None = None, memory_mb: int | None = None) -> tuple[int, str]:
    """How many sandboxes of this budget fit at once, and what limits it."""
    cpus = cpus if cpus is not None else sorted(os.sched_getaffinity(0))
    memory_mb = memory_mb if memory_mb is not None else psutil.virtual_memory().total // (1 << 20)
    by_cores = len(cpus) // budget.cores
    by_memory = max(0, memory_mb - _HOST_RESERVE_MB) // budget.memory_mb
    if by_cores <= by_memory:
        return by_cores, f"{len(cpus)} cores / {budget.cores} per run"
    return by_memory, f"{memory_mb} MB memory ({_HOST_RESERVE_MB} MB kept) / {budget.memory_mb} MB per run"


def local_slots(budget: Budget, wanted: int | None, node: str | None = None) -> list[Slot]:
    """Disjoint cpusets, one per slot: slot i takes CPUs [i*cores, (i+1)*cores) of those we may use."""
    cpus = sorted(os.sched_getaffinity(0))
    fits, why = capacity(budget, cpus)
    if fits < 1:
        raise ConfigError(f"not even one sandbox fits this machine ({why})")
    n = fits if wanted is None else wanted
    if n > fits:
        raise ConfigError(f"{n} slots asked for, but only {fits} fit this machine ({why})")
    node = node or socket.gethostname()
    return [Slot(node, i, ",".join(str(c) for c in cpus[i * budget.cores:(i + 1) * budget.cores])) for i in range(n)]


class LocalBackend:
    name = "local"

    def __init__(self, home: Home, client: docker.DockerClient, ledger: Ledger, budget: Budget,
                 slots: int | None = None, gateway: GatewayHost | None = None) -> None:
        self.home, self.client, self.ledger = home, client, ledger
        self.gateway = gateway  # the driver's model gateway, shared by every slot
        self._slots = local_slots(budget, slots)
        self._pool = ThreadPoolExecutor(max_workers=len(self._slots), thread_name_prefix="sbx-slot")
        self._cancel = threading.Event()

    def slots(self) -> list[Slot]:
        return list(self._slots)

    def alive(self, slot: Slot) -> bool:
        return True

    def submit(self, job: RunJob, slot: Slot) -> Future[JobResult]:
        return self._pool.submit(execute_job, self.home, self.client, self.ledger, job, slot, self.gateway,
                                 self._cancel)

    def interrupt(self) -> None:
        """Stop the runs in flight: each sandbox sees it at its next look at its limits (a quarter second) and
        ends its attempt failed/infra, cleaning up after itself; no new step starts."""
        self._cancel.set()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
