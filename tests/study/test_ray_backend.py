"""The Ray backend end to end on a two-node cluster in this process (ray.cluster_utils.Cluster).

Each node declares the `sbx_docker` resource and its own CPU ($SBX_NODE_CPUS), and drives this machine's
engine. A small study runs to its end spread over both nodes with every record and artifact back on the
driver; then a node is removed while a run is in its sandbox: that attempt becomes failed/infra
(counted = false), the run completes on the other node, and nothing of it is left behind.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.artifacts import ArtifactStore
from orchestrator.ledger import Ledger, RunState
from orchestrator.scoring.store import load_scores
from orchestrator.sandbox.docker import LABEL_RUN, LABEL_STUDY
from orchestrator.specs import load_budget
from orchestrator.specs.study import StudySpec

pytestmark = [pytest.mark.ray, pytest.mark.docker, pytest.mark.slow]

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from orchestrator.study.ray_backend import RESOURCE, RayBackend  # noqa: E402
from orchestrator.study.runner import StudyRunner  # noqa: E402

AGENTS = Path(__file__).resolve().parent / "agents"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, object]]:
    """A head node and one worker node, both Docker nodes with one CPU each (CPU 0 and CPU 1)."""
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {RESOURCE: 1}, "env_vars": {"SBX_NODE_CPUS": "0"}})
    worker = c.add_node(num_cpus=1, resources={RESOURCE: 1}, env_vars={"SBX_NODE_CPUS": "1"})
    c.wait_for_nodes()
    try:
        yield c, worker
    finally:
        c.shutdown()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SBX_HOME", str(tmp_path / "driver"))
    return tmp_path / "driver"


def _spec(name: str, address: str, pairings: list[dict], repeats: int) -> StudySpec:
    return StudySpec.model_validate({"name": name, "budget": "smoke", "repeats": repeats, "pairings": pairings,
                                     "backend": {"type": "ray", "address": address}, "infra_retries": 1})


def _run(spec: StudySpec, ledger: Ledger, client, data: Path, progress=None):
    backend = RayBackend(spec.backend, load_budget(spec.budget), ledger)
    try:
        slots = backend.slots()
        tally = StudyRunner(spec, ledger, client, backend, progress=progress, data_dir=data).run()
    finally:
        backend.close()
    return slots, tally


def _leftovers(client, study_id: str) -> list[str]:
    return [c.name for c in client.containers.list(all=True, filters={"label": f"{LABEL_STUDY}={study_id}"})]


def test_a_study_spreads_over_both_nodes_and_comes_home(cluster, home: Path, docker_client, built_images,
                                                        small_flight_data: Path) -> None:
    c, _ = cluster
    spec = _spec("fleet-spread", c.address, [{"agent": "noop"}, {"agent_command": str(AGENTS / "quick.py")}], 2)
    with Ledger(home / "ledger.sqlite") as ledger:
        slots, tally = _run(spec, ledger, docker_client, small_flight_data)
        assert [s.cpuset for s in slots] in (["0", "1"], ["1", "0"]) and slots[0].node != slots[1].node
        study = ledger.get_study_by_name(spec.name).study_id
        runs = ledger.list_runs(study_id=study)
        assert len(runs) == 4 and tally.retried == 0
        assert all(r.status is RunState.AUDITED and r.counted and r.attempt == 1 for r in runs)
        assert {(r.pairing, r.repeat) for r in runs} == {(p, k) for p in ("noop", "quick.py") for k in (1, 2)}
        assert {r.node for r in runs} == {s.node for s in slots}  # both nodes ran runs
        store = ArtifactStore()
        for r in runs:
            record = ledger.run_record_json(r.run_id)
            kinds = [e["kind"] for e in record["events"]]
            assert kinds.count("imported") == 2 and "agent_started" in kinds
            manifest = store.get_manifest(r.artifact_manifest)
            assert store.has(manifest["bundle_sha256"]) and store.has(manifest["agent_log_sha256"])
            assert all(store.has(sha) for sha in manifest["train_versions"].values())
            assert (home / "runs" / r.run_id / "delivered" / "git" / "train" / f"{r.delivered_sha256}.py").is_file()
            with ledger.connection() as conn:
                assert load_scores(conn, r.run_id)["holdout"].auc is not None
            if r.pairing == "quick.py":
                assert record["experiments_counted"] == 1 and store.has(record["experiments"][0]["train_sha256"])
        assert _leftovers(docker_client, study) == []


def test_a_lost_node_costs_one_uncounted_attempt(cluster, home: Path, docker_client, built_images,
                                                small_flight_data: Path) -> None:
    c, worker = cluster
    spec = _spec("fleet-loss", c.address, [{"agent_command": str(AGENTS / "sleeper.py")}], 2)
    killed: dict[str, str] = {}

    def kill_when_sandboxed(run_id: str) -> None:
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if docker_client.containers.list(filters={"label": f"{LABEL_RUN}={run_id}", "status": "running"}):
                time.sleep(1)  # the agent is well into its sleep
                c.remove_node(worker)
                killed["run_id"] = run_id
                return
            time.sleep(0.2)

    def progress(kind: str, tally, _outcome) -> None:
        if kind != "started" or killed or "watching" in killed:
            return
        for run_id, slot in tally.running.items():
            if worker.node_id[:6] in slot:
                killed["watching"] = run_id
                threading.Thread(target=kill_when_sandboxed, args=(run_id,), daemon=True).start()

    with Ledger(home / "ledger.sqlite") as ledger:
        slots, tally = _run(spec, ledger, docker_client, small_flight_data, progress)
        assert killed.get("run_id"), "no run reached its sandbox on the worker node"
        study = ledger.get_study_by_name(spec.name).study_id
        runs = ledger.list_runs(study_id=study)
        lost = ledger.get_run(killed["run_id"])
        assert lost.status is RunState.FAILED and lost.failure_class == "infra" and not lost.counted
        assert worker.node_id[:6] in (lost.node or "")
        retry = next(r for r in runs if r.retry_of == lost.run_id)
        assert retry.status is RunState.AUDITED and retry.counted and retry.attempt == 2
        assert worker.node_id[:6] not in (retry.node or "")
        counted = [r for r in runs if r.counted]
        assert sorted(r.repeat for r in counted) == [1, 2] and all(r.status is RunState.AUDITED for r in counted)
        assert tally.retried == 1
        assert _leftovers(docker_client, study) == []
        assert not docker_client.volumes.list(filters={"label": f"{LABEL_STUDY}={study}"})
