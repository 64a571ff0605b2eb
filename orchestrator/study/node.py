"""The node side of a fleet run: execute one job against a temporary ledger and artifact store, and hand
back everything it produced as plain values, for the driver (which alone writes the study's ledger).

Nothing here imports Ray: `orchestrator/study/ray_backend.py` calls `run_on_node` inside a Ray task and
`take_result` on the driver. Each job gets its own temporary `Home` on the node (passed explicitly; the
process's environment is never changed), which holds only this run, so "every artifact-store object" and
"the run folder" are exactly what the run made.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import json
import os
import shutil
import socket
import tarfile
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import docker

from orchestrator.artifacts import ArtifactStore
from orchestrator.failures import InfraError
from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunState
from orchestrator.log import get_logger
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.sandbox.safetar import TarCaps, extract_strictly
from orchestrator.specs import TaskSpec
from orchestrator.study.backend import JobResult, RunJob, Slot
from orchestrator.study.job import execute_job, job_task
from orchestrator.study.reaper import remove_containers

log = get_logger(__name__)

#: a run folder carried between node and driver (delivered repo, logs): generous, but bounded
FOLDER_CAPS = TarCaps(max_entries=100_000, max_file_bytes=1 << 30, max_total_bytes=4 << 30)
_NODE_HOME_PREFIX = "sbx-node-"


@dataclass(frozen=True)
class NodeResult:
    """What a node hands back for one job. `error` is set when the job raised after the run was imported
    (the records still come back, so a delivered run is not lost); the driver raises it after importing."""

    outcome: JobResult | None
    records: dict[str, Any]
    artifacts: dict[str, bytes]
    files: bytes
    node: str
    error: str | None = None


# --- plain helpers, used on both sides ----------------------------------------------------------------------


def node_cpus() -> list[int]:
    """The CPUs this node's sandboxes may use: $SBX_NODE_CPUS (a cpuset list such as `0-1,4`), else the
    CPUs this process may run on. Two workers on one machine get disjoint lists."""
    text = os.environ.get("SBX_NODE_CPUS", "").strip()
    if not text:
        return sorted(os.sched_getaffinity(0))
    cpus: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return sorted(cpus)


def data_fingerprint(data_dir: Path) -> str | None:
    """A hash of the prepared files' own hashes (manifest.json), the same for the same bytes anywhere."""
    manifest = data_dir / "manifest.json"
    if not manifest.is_file():
        return None
    files = json.loads(manifest.read_text()).get("files", {})
    listing = {name: info.get("sha256") for name, info in sorted(files.items())}
    return hashlib.sha256(json.dumps(listing, sort_keys=True).encode()).hexdigest()


def pack_folder(folder: Path) -> bytes:
    """A folder's regular files and directories as an uncompressed tar (links are left out)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
    return buf.getvalue()


def unpack_folder(data: bytes, dest: Path) -> None:
    """Replace `dest` with the folder packed in `data` (extracted beside it first, then renamed)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.in-", dir=dest.parent))
    try:
        extracted = extract_strictly(io.BytesIO(data), tmp, FOLDER_CAPS)
        if extracted.skipped_counts:
            log.warning("node.folder_skipped", folder=str(dest), counts=dict(extracted.skipped_counts))
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- the node side -----------------------------------------------------------------------------------------

#: this node process's model gateways, by (endpoints file, rate-card folder): started on first use, stopped
#: when the process exits (a Ray worker runs many jobs)
_GATEWAYS: dict[tuple[str, str], GatewayHost] = {}


def node_gateway(job: RunJob) -> GatewayHost | None:
    """The node's model gateway for a job that talks to a model. The endpoints file and rate cards are read
    at the paths the driver named; the keys come from this node's environment or files."""
    if job.endpoint is None and job.judge is None:
        return None
    key = (job.endpoints_file or "endpoints.yaml", job.ratecards_dir or "ratecards")
    host = _GATEWAYS.get(key)
    if host is None:
        host = GatewayHost.from_files(Path(key[0]), Path(key[1])).start()
        _GATEWAYS[key] = host
        atexit.register(host.stop)
    return host



def node_data(node_home: Home, job: RunJob, fingerprint: str | None, task: TaskSpec) -> Path:
    """The prepared data this node uses for `job` (an ml task's): the driver's folder when it exists here,
    else the node's own (in the node's configured Home), whichever holds the driver's bytes."""
    candidates = [Path(job.data_dir)] if job.data_dir else []
    candidates.append(task.data_dir(node_home))
    for path in candidates:
        if path.is_dir() and (fingerprint is None or data_fingerprint(path) == fingerprint):
            return path
    raise InfraError(f"node {socket.gethostname()}: no prepared data matching the driver's "
                     f"(looked in {', '.join(map(str, candidates))}); run `sbx data prepare` with the driver's options")


def reap_dead(client: docker.DockerClient, node_home: Home, dead_hosts: frozenset[str]) -> list[str]:
    """Remove sbx containers whose owner is gone (a task killed with its node or worker): on this host when
    the owning pid is gone, or when the owner's host is a dead node; and the temporary homes such tasks left
    here. Any study's: a dead owner's container is garbage whoever planned it (`sbx gc --dead-only`)."""
    runs = remove_containers(client, node_home.mount_parent, dead_only=True, dead_hosts=dead_hosts)
    for run_id in runs:
        for home in Path(tempfile.gettempdir()).glob(f"{_NODE_HOME_PREFIX}{run_id[-8:]}-*"):
            shutil.rmtree(home, ignore_errors=True)
    if runs:
        log.info("node.reaped", runs=runs)
    return runs


def run_on_node(client: docker.DockerClient, node_home: Home, job: RunJob, slot: Slot, sent: dict[str, Any],
                folder: bytes | None, fingerprint: str | None) -> NodeResult:
    """Execute `job` here: import the driver's row into a fresh ledger, run (or finish) it, export it. The
    job's task is the bundle it carries, checked against this node's cache (a different bundle held here
    under its digest is refused: DataError naming both digests, before anything runs)."""
    task = job_task(job)
    if isinstance(task, TaskSpec):
        job = replace(job, data_dir=str(node_data(node_home, job, fingerprint, task)))
    home = Home(Path(tempfile.mkdtemp(prefix=f"{_NODE_HOME_PREFIX}{job.run_id[-8:]}-")), node_home.shared)
    try:
        with Ledger(home.ledger_path) as ledger:
            ledger.transfer.import_run(sent)
            run_dir = home.run_dir(job.run_id)
            if folder is not None:
                unpack_folder(folder, run_dir)
            outcome, error = None, None
            try:
                outcome = execute_job(home, client, ledger, job, slot, gateway=node_gateway(job), task=task)
            except Exception as exc:  # our fault; the records still go back
                error = f"{type(exc).__name__}: {exc}"
                log.warning("node.job_error", error=error[:500])
            records = ledger.transfer.export_run(job.run_id)
            store = ArtifactStore(home.artifacts_dir)
            artifacts = {p.parent.name + p.name: p.read_bytes() for p in store.root.glob("??/*") if p.is_file()}
            files = pack_folder(run_dir) if run_dir.is_dir() else b""
        return NodeResult(outcome, records, artifacts, files, slot.node, error)
    finally:
        shutil.rmtree(home.root, ignore_errors=True)


# --- the driver side ---------------------------------------------------------------------------------------


def take_result(home: Home, ledger: Ledger, result: NodeResult, base: RunState | str) -> None:
    """Bring a node's run into the driver's home: artifacts (each checked against its hash), then the run
    folder, then the ledger rows in one transaction (so no row ever names a file the driver lacks)."""
    store = ArtifactStore(home.artifacts_dir)
    for sha, data in result.artifacts.items():
        if store.put_bytes(data) != sha:
            raise InfraError(f"artifact {sha} from node {result.node} does not match its hash")
    run_id = result.records["run"]["run_id"]
    if result.files:
        unpack_folder(result.files, home.run_dir(run_id))
    ledger.transfer.import_run(result.records, base=base)
