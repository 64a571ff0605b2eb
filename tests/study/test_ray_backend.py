"""The Ray backend end to end on a two-node cluster in this process (ray.cluster_utils.Cluster).

Each node declares the `sbx_docker` resource and its own CPU ($SBX_NODE_CPUS), and drives this machine's
engine. A small study runs to its end spread over both nodes with every record and artifact back on the
driver; then a node is removed while a run is in its sandbox: that attempt becomes failed/infra
(counted = false), the run completes on the other node, and nothing of it is left behind.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from orchestrator.artifacts import ArtifactStore
from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunState
from orchestrator.sandbox.container import LABEL_RUN, LABEL_STUDY
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
    where = Home(ledger.path.parent)
    backend = RayBackend(spec.backend, load_budget(spec.budget), where, ledger)
    try:
        slots = backend.slots()
        tally = StudyRunner(spec, where, ledger, client, backend, progress=progress, data_dir=data).run()
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
        store = ArtifactStore(home / "artifacts")
        for r in runs:
            record = ledger.run_record_json(r.run_id)
            kinds = [e["kind"] for e in record["events"]]
            assert kinds.count("imported") == 2 and "agent_started" in kinds
            manifest = store.get_manifest(r.artifact_manifest)
            assert store.has(manifest["bundle_sha256"]) and store.has(manifest["agent_log_sha256"])
            assert all(store.has(sha) for sha in manifest["train_versions"].values())
            assert (home / "runs" / r.run_id / "delivered" / "git" / "train" / f"{r.delivered_sha256}.py").is_file()
            assert ledger.scores.of_run(r.run_id)["holdout"].auc is not None
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
        # no engine for the driver: the leftovers of the lost task are the nodes' to reap (study/node.py)
        slots, tally = _run(spec, ledger, None, small_flight_data, progress)
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


def test_a_delivered_run_is_finished_on_a_node(cluster, home: Path, docker_client, built_images,
                                              small_flight_data: Path) -> None:
    """A resumed study whose run was left delivered: the run folder goes to a node, is scored and audited
    there, and comes back (the driver's row was `delivered` when sent)."""
    from orchestrator.agents import resolve_agent
    from orchestrator.run import RunLifecycle, RunRequest
    from orchestrator.specs import load_task
    from orchestrator.study.runner import open_study

    c, _ = cluster
    spec = _spec("fleet-finish", c.address, [{"agent": "noop"}], 1)
    with Ledger(home / "ledger.sqlite") as ledger:
        study = open_study(ledger, spec)
        run_id = ledger.new_run(task=spec.task, agent="noop", budget_name=spec.budget, pairing="noop",
                                study_id=study, repeat=1)
        req = RunRequest(task=load_task(spec.task), budget=load_budget(spec.budget), agent=resolve_agent("noop"),
                         study_id=study, data_dir=small_flight_data, datasets=())
        RunLifecycle(Home(home), ledger, docker_client).run(req, run_id)  # as if the driver died after delivery
        assert ledger.get_run(run_id).status is RunState.DELIVERED
        _run(spec, ledger, docker_client, small_flight_data)
        record = ledger.run_record_json(run_id)
        assert record["status"] == "audited" and record["attempt"] == 1
        assert [e["detail"]["base"] for e in record["events"] if e["kind"] == "imported"][-1] == "delivered"
        assert ledger.scores.of_run(run_id)["holdout"].auc is not None
        # the audit made on the node came back with the run
        assert {a.rule for a in ledger.audits.latest(run_id)} >= {"eval_labels_in_fit", "frame_statistics"}


# --- the compose fleet: a head and two Docker workers in containers, the driver on this host --------------

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def compose_fleet(tmp_path: Path, docker_client, built_images, small_flight_data: Path):
    """`docker-compose up` of ray-head, ray-worker-1 and ray-worker-2 under a project name of this test only,
    with a shared folder of its own holding the prepared data and the agent; `down -v` however it ends."""
    if shutil.which("docker-compose") is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI needs docker-compose (apt-get install docker-compose)")
        pytest.skip("docker-compose is not installed")
    from orchestrator.images import build_images

    fleet_image = build_images(docker_client, ("fleet",))[0].tag
    project = f"sbxtest{uuid.uuid4().hex[:8]}"
    shared = Path(tempfile.mkdtemp(prefix=f"{project}-", dir="/tmp"))  # a host path, the same in the workers
    shared.chmod(0o755)
    shutil.copytree(small_flight_data, shared / "data")
    agent = shared / "sleeper.py"
    shutil.copyfile(AGENTS / "sleeper.py", agent)
    agent.chmod(0o755)
    port = _free_port()
    env = {**os.environ, "SBX_FLEET_IMAGE": fleet_image, "SBX_SHARED_DIR": str(shared),
           "SBX_RAY_CLIENT_PORT": str(port), "SBX_PREPARE_DATA": "0"}

    def compose(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["docker-compose", "-f", str(COMPOSE), "-p", project, *args], env=env,
                              capture_output=True, text=True, check=check, timeout=120)

    try:
        compose("up", "-d", "--no-build", "ray-head", "ray-worker-1", "ray-worker-2")
        workers = {name: compose("ps", "-q", name).stdout.strip() for name in ("ray-worker-1", "ray-worker-2")}
        end = time.monotonic() + 90
        while not all("Ray runtime started" in docker_client.containers.get(cid).logs().decode(errors="replace")
                      for cid in workers.values()):
            assert time.monotonic() < end, compose("logs", "--tail", "30", check=False).stdout
            time.sleep(0.5)
        def head_logs() -> str:  # for failure messages: the Ray Client server's own logs
            return compose("exec", "-T", "ray-head", "sh", "-c", "tail -n 40 /tmp/ray/session_latest/logs/ray_client_server*",
                           check=False).stdout

        yield {"address": f"ray://127.0.0.1:{port}", "shared": shared, "agent": agent, "compose": compose,
               "hosts": {name: cid[:12] for name, cid in workers.items()},  # a container's hostname
               "head_logs": head_logs}
    finally:
        compose("down", "-v", "--remove-orphans", "-t", "2", check=False)
        shutil.rmtree(shared, ignore_errors=True)


def test_the_compose_fleet_survives_a_stopped_worker(compose_fleet, tmp_path: Path, docker_client) -> None:
    fleet, home = compose_fleet, tmp_path / "driver"
    study_file = tmp_path / "study.yaml"
    study_file.write_text(yaml.safe_dump({
        "name": "compose-fleet", "budget": "smoke", "repeats": 4, "infra_retries": 1,
        "pairings": [{"agent_command": str(fleet["agent"])}],
        "backend": {"type": "ray", "address": fleet["address"]}}))
    sbx = Path(sys.executable).with_name("sbx")
    driver = subprocess.Popen([str(sbx), "study", "run", str(study_file), "--data-dir", str(fleet["shared"] / "data")],
                              env={**os.environ, "SBX_HOME": str(home)}, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    stopped_during = None
    try:
        seen: list[str] = []
        end = time.monotonic() + 240
        while driver.poll() is None and time.monotonic() < end:  # stop worker 2 in its second run
            for c in docker_client.containers.list(filters={"label": "sbx.kind=sandbox"}):
                if c.labels.get("sbx.owner", "").startswith(fleet["hosts"]["ray-worker-2"] + ":"):
                    if c.labels["sbx.run"] not in seen:
                        seen.append(c.labels["sbx.run"])
            if len(seen) >= 2:
                time.sleep(1)
                fleet["compose"]("stop", "-t", "2", "ray-worker-2")
                stopped_during = seen[1]
                break
            time.sleep(0.2)
        out, _ = driver.communicate(timeout=300)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode == 0, out[-3000:] + fleet["head_logs"]()
    assert stopped_during, f"worker 2 never reached a second run: {seen}\n{out[-3000:]}"
    with Ledger(home / "ledger.sqlite", create=False) as ledger:
        study = ledger.get_study_by_name("compose-fleet").study_id
        runs = ledger.list_runs(study_id=study)
        counted = [r for r in runs if r.counted]
        assert sorted(r.repeat for r in counted) == [1, 2, 3, 4]  # each planned run once
        assert all(r.status is RunState.AUDITED for r in counted)
        assert all(r.status is RunState.FAILED and r.failure_class == "infra" for r in runs if not r.counted)
        lost = ledger.get_run(stopped_during)
        assert lost.status is RunState.FAILED and lost.failure_class == "infra" and not lost.counted
        nodes = {r.node.rsplit("-", 1)[0] for r in counted}
        assert nodes == set(fleet["hosts"].values()), nodes  # runs were spread over both workers
        assert lost.node.startswith(fleet["hosts"]["ray-worker-2"])
    assert _leftovers(docker_client, study) == []
