"""The fleet backend on Ray: one Ray task per run, pinned to its slot's node, on nodes with a Docker engine.

Nodes are the alive Ray nodes that declare the custom resource `sbx_docker` (`ray start ... --resources
'{"sbx_docker": 1}'`). A probe task on each says which CPUs its sandboxes may use ($SBX_NODE_CPUS, else
the worker's affinity) and how many sandboxes of the budget fit; slots interleave nodes (A#0, B#0, A#1,
B#1, ...) so every node receives every pairing in turn.

The driver alone writes the study's ledger. A job's task imports the planned row into a temporary ledger
on its node, runs there (orchestrator/study/node.py) and returns the records, the artifact-store objects
and the run folder as bytes; the driver takes them into its ledger and home before the Future it returned
resolves. A node lost mid-run makes the Ray call raise (NodeDiedError, WorkerCrashedError, ...): the
Future raises, the driver's runner turns the attempt into `failed/infra` (counted = false) and retries it
on a live slot; the lost node's slots are dropped. Containers the dead task left behind are reaped by the
next task on a node that shares their engine (see `node.reap_dead`), or by the next `sbx study run`.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

# Ray checks that driver and cluster run the same Python; the default compares the patch level, which a
# driver on the host (say 3.11.7) and nodes in Debian's image (3.11.2) never share. The minor level is
# what pickling needs; Ray logs the difference. Set before Ray reads it; the user may override it.
os.environ.setdefault("RAY_DEFAULT_PYTHON_VERSION_MATCH_LEVEL", "minor")

import ray  # noqa: E402
import ray.exceptions  # noqa: E402
import structlog  # noqa: E402
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: E402

from orchestrator.failures import ConfigError, InfraError  # noqa: E402
from orchestrator.home import Home  # noqa: E402
from orchestrator.ledger import Ledger  # noqa: E402
from orchestrator.log import get_logger  # noqa: E402
from orchestrator.specs import Budget, load_task  # noqa: E402
from orchestrator.specs.study import RayBackend as RayBackendSpec  # noqa: E402
from orchestrator.study import node  # noqa: E402
from orchestrator.study.backend import JobResult, RunJob, Slot  # noqa: E402

log = get_logger(__name__)

#: the custom resource a Ray node declares when it has a Docker engine sbx may drive
RESOURCE = "sbx_docker"


# --- what runs on the nodes ---------------------------------------------------------------------------------


def _dead_hosts() -> frozenset[str]:
    """Hostnames of dead Ray nodes that no live node shares: their containers have no owner left."""
    nodes = ray.nodes()
    alive = {n["NodeManagerHostname"] for n in nodes if n["Alive"]}
    return frozenset({n["NodeManagerHostname"] for n in nodes if not n["Alive"]} - alive)


@ray.remote(num_cpus=0, max_retries=0)
def _probe(budget: Budget) -> dict[str, Any]:
    """What one node offers: its hostname, its sandbox CPUs, and how many sandboxes of `budget` fit."""
    import socket

    from orchestrator import engine
    from orchestrator.study.local import capacity

    cpus = node.node_cpus()
    fits, why = capacity(budget, cpus)
    try:
        engine.client()
        docker_ok = True
    except Exception as exc:  # reported to the driver, which skips the node
        docker_ok, why = False, str(exc)
    return {"hostname": socket.gethostname(), "cpus": cpus, "fits": fits if docker_ok else 0, "why": why}


@ray.remote(max_retries=0)
def _execute(job: RunJob, slot: Slot, sent: dict[str, Any], folder: bytes | None,
             fingerprint: str | None) -> node.NodeResult:
    """One job on its node. Never retried by Ray: a lost attempt is the driver's to retry, as a new one."""
    from orchestrator import engine

    node_home = Home.from_env()  # the node's own configuration ($SBX_HOME, $SBX_SHARED_DIR of its worker)
    with structlog.contextvars.bound_contextvars(study=job.study_name, study_id=job.study_id,
                                                 run_id=job.run_id, node=slot.node):
        client = engine.client()
        node.reap_dead(client, node_home, _dead_hosts())
        try:
            return node.run_on_node(client, node_home, job, slot, sent, folder, fingerprint)
        finally:
            node.reap_dead(client, node_home, _dead_hosts())


# --- the driver side ----------------------------------------------------------------------------------------


def _connect(address: str, attempts: int = 3) -> None:
    """ray.init, tried again when Ray Client's per-driver server fails to start on the head (measured: now and
    then on a loaded 2-core machine, `Starting Ray client server failed`)."""
    for attempt in range(1, attempts + 1):
        try:
            ray.init(address=address, namespace="sbx", log_to_driver=True)
            return
        except ConnectionAbortedError as exc:
            ray.shutdown()
            if attempt == attempts:
                raise InfraError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
            log.warning("fleet.connect_retry", address=address, attempt=attempt, error=str(exc)[:300])
            time.sleep(2 * attempt)


def interleave(per_node: dict[str, list[Slot]]) -> list[Slot]:
    """Slot order A#0, B#0, A#1, B#1, ...: consecutive jobs (the plan rotates pairings) go to different nodes."""
    most = max((len(s) for s in per_node.values()), default=0)
    return [slots[i] for i in range(most) for slots in per_node.values() if i < len(slots)]


class RayBackend:
    name = "ray"

    def __init__(self, spec: RayBackendSpec, budget: Budget, home: Home, ledger: Ledger,
                 slots_per_node: int | None = None) -> None:
        self.spec, self.budget, self.home, self.ledger = spec, budget, home, ledger
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            _connect(spec.address)
        self._node_ids: dict[str, str] = {}      # slot.node -> Ray node id
        self._slots = self._discover(slots_per_node or spec.slots_per_node)
        self._refs: dict[str, Any] = {}
        self._lost: set[str] = set()             # nodes a task was lost with
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=len(self._slots), thread_name_prefix="sbx-ray")

    def _discover(self, cap: int | None) -> list[Slot]:
        nodes = [n for n in ray.nodes() if n["Alive"] and n["Resources"].get(RESOURCE, 0) > 0]
        if not nodes:
            raise ConfigError(f"no alive Ray node declares the {RESOURCE!r} resource "
                              f"(ray start ... --resources '{{\"{RESOURCE}\": 1}}' on machines with Docker)")
        probes = [_probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
                  .remote(self.budget) for n in nodes]
        per_node: dict[str, list[Slot]] = {}
        for n, info in zip(nodes, ray.get(probes), strict=True):
            ray_cpus = int(n["Resources"].get("CPU", 0))
            count = min(info["fits"], ray_cpus // self.budget.cores, *([cap] if cap else []))
            label = f"{info['hostname']}-{n['NodeID'][:6]}"
            log.info("fleet.node", node=label, cpus=info["cpus"], ray_cpus=ray_cpus, slots=count, why=info["why"])
            if count < 1:
                continue
            cores, cpus = self.budget.cores, info["cpus"]
            per_node[label] = [Slot(label, i, ",".join(map(str, cpus[i * cores:(i + 1) * cores]))) for i in range(count)]
            self._node_ids[label] = n["NodeID"]
        slots = interleave(per_node)
        if not slots:
            raise ConfigError(f"no {RESOURCE} node fits a sandbox of budget {self.budget.name}")
        return slots

    def slots(self) -> list[Slot]:
        return list(self._slots)

    def alive(self, slot: Slot) -> bool:
        """Whether the slot's node is still in the cluster (a lost node's slots are not used again). A task
        lost with its node says so before the cluster's health checks do (measured: ray.nodes() still
        listed a stopped compose worker as alive when its task had already failed)."""
        if slot.node in self._lost:
            return False
        node_id = self._node_ids.get(slot.node)
        return any(n["NodeID"] == node_id and n["Alive"] for n in ray.nodes())

    def submit(self, job: RunJob, slot: Slot) -> Future[JobResult]:
        return self._pool.submit(self._run, job, slot)

    def _fingerprint(self, job: RunJob) -> str | None:
        """The driver's prepared data, by the hashes of its files, for an ml task (a tests task has none)."""
        if job.data_dir:
            return node.data_fingerprint(Path(job.data_dir))
        if job.task_bundle is not None:
            if job.task_bundle.kind != "ml":
                return None
            return node.data_fingerprint(self.home.data_dir(job.task_bundle.spec["data"]))
        return node.data_fingerprint(load_task(job.task).data_dir(self.home))

    def _run(self, job: RunJob, slot: Slot) -> JobResult:
        sent = self.ledger.transfer.export_run(job.run_id)
        base = sent["run"]["status"]
        run_dir = self.home.run_dir(job.run_id)
        folder = node.pack_folder(run_dir) if job.phase == "finish" and run_dir.is_dir() else None
        fingerprint = self._fingerprint(job)
        strategy = NodeAffinitySchedulingStrategy(self._node_ids[slot.node], soft=False)
        ref = _execute.options(scheduling_strategy=strategy, num_cpus=self.budget.cores,
                               name=f"sbx-run-{job.run_id}").remote(job, slot, sent, folder,
                                                                    fingerprint)
        with self._lock:
            self._refs[job.run_id] = ref
        try:
            result: node.NodeResult = ray.get(ref)
        except (ray.exceptions.NodeDiedError, ray.exceptions.TaskUnschedulableError):
            with self._lock:
                self._lost.add(slot.node)
            raise
        finally:
            with self._lock:
                self._refs.pop(job.run_id, None)
        node.take_result(self.home, self.ledger, result, base)
        if result.error is not None or result.outcome is None:
            raise InfraError(f"on node {result.node}: {result.error}")
        return result.outcome

    def interrupt(self) -> None:
        """The driver is stopping: each node's task gets a KeyboardInterrupt (its run ends failed/infra on the
        node and cleans up there, as for Ctrl-C)."""
        with self._lock:
            refs = list(self._refs.values())
        for ref in refs:
            try:
                ray.cancel(ref, force=False)
            except Exception as exc:  # already finished or its node is gone
                log.debug("fleet.cancel_failed", error=str(exc))

    def close(self) -> None:
        with self._lock:
            refs = list(self._refs.values())
        for ref in refs:  # the driver is stopping: its nodes' tasks stop too (their containers are reaped later)
            try:
                ray.cancel(ref, force=True)
            except Exception as exc:  # already finished or its node is gone
                log.debug("fleet.cancel_failed", error=str(exc))
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._owns_ray:
            ray.shutdown()
