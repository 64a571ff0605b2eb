"""The node side's plain helpers (orchestrator/study/node.py) and the Ray backend's slot order, without Ray."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from orchestrator.study.backend import Slot
from orchestrator.study.node import data_fingerprint, node_cpus, pack_folder, unpack_folder


def test_node_cpus_reads_a_cpuset_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBX_NODE_CPUS", "0-2, 5,7-8")
    assert node_cpus() == [0, 1, 2, 5, 7, 8]
    monkeypatch.delenv("SBX_NODE_CPUS")
    assert node_cpus()  # this process's affinity


def test_slots_interleave_nodes() -> None:
    ray_backend = pytest.importorskip("orchestrator.study.ray_backend")
    a = [Slot("a", i, str(i)) for i in range(3)]
    b = [Slot("b", i, str(4 + i)) for i in range(2)]
    assert [s.label for s in ray_backend.interleave({"a": a, "b": b})] == ["a#0", "b#0", "a#1", "b#1", "a#2"]


def test_a_folder_travels_as_plain_files_only(tmp_path: Path) -> None:
    src = tmp_path / "run"
    (src / "delivered" / "git").mkdir(parents=True)
    (src / "agent.log").write_text("hello")
    (src / "delivered" / "git" / "repo.bundle").write_bytes(b"\0" * 10)
    (src / "escape").symlink_to("/etc/passwd")
    dest = tmp_path / "home" / "runs" / "r-1"
    dest.mkdir(parents=True)
    (dest / "stale.txt").write_text("replaced")
    unpack_folder(pack_folder(src), dest)
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == [
        "agent.log", "delivered", "delivered/git", "delivered/git/repo.bundle"]
    assert (dest / "agent.log").read_text() == "hello"


def test_the_data_fingerprint_is_of_the_files_hashes(tmp_path: Path) -> None:
    assert data_fingerprint(tmp_path) is None
    manifest = {"files": {"train.csv": {"sha256": "ab", "rows": 2}}, "created": "anything"}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    first = data_fingerprint(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({**manifest, "created": "other"}, indent=2))
    assert data_fingerprint(tmp_path) == first
    manifest["files"]["train.csv"]["sha256"] = "cd"
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    assert data_fingerprint(tmp_path) != first


def test_a_node_starts_one_gateway_per_endpoints_file_for_jobs_that_talk_to_a_model(tmp_path: Path) -> None:
    from orchestrator.study import node
    from orchestrator.study.backend import RunJob
    from tests.run.standin_setup import write_model_files

    endpoints, cards = write_model_files(tmp_path, "http://127.0.0.1:9")
    job = RunJob(study_id="s", study_name="s", run_id="r-1", pairing="p", agent="noop", agent_command=None,
                 model="sbx-standin", repeat=1, seed=0, task="flight-delays", budget="smoke", datasets=("holdout",))
    assert node.node_gateway(job) is None  # no endpoint: no gateway
    with_model = replace(job, endpoint="standin-chat", endpoints_file=str(endpoints), ratecards_dir=str(cards))
    try:
        host = node.node_gateway(with_model)
        assert host is not None and node.node_gateway(replace(with_model, run_id="r-2")) is host
        assert host.endpoints_file == endpoints and set(host.endpoints) >= {"standin-chat"}
    finally:
        for started in node._GATEWAYS.values():
            started.stop()
        node._GATEWAYS.clear()


# --- a job carries what was validated (orchestrator/tasks/bundle.py, study/job.py) -------------------------

def _job(task: str, **changes):
    from orchestrator.study.backend import RunJob
    from orchestrator.study.job import validated_inputs

    job = RunJob(study_id="s", study_name="s", run_id="r-1", pairing="p", agent="noop", agent_command=None,
                 model=None, repeat=1, seed=0, task=task, budget="smoke", datasets=("holdout",),
                 **validated_inputs(task, "smoke"))
    return replace(job, **changes)


def test_an_ml_job_carries_its_bundle_and_the_node_runs_that(tmp_path: Path) -> None:
    """flight-delays-reference: its repo lies outside its folder (`../flight-delays/repo`); the node's copy
    loads as the same spec with the same repo bytes and modes, so its runs hash to the same config."""
    from orchestrator.run.config_hash import tree_sha256
    from orchestrator.specs import load_task
    from orchestrator.study.job import job_budget, job_task
    from orchestrator.tasks.bundle import bundle_dir

    job = _job("flight-delays-reference")
    bundle = job.task_bundle
    assert bundle is not None and bundle.task_dir == "flight-delays-reference"
    assert "flight-delays/repo/train.py" in bundle.files and "flight-delays/repo/run_experiment" in bundle.executable
    here = load_task("flight-delays-reference")
    there = job_task(job, tmp_path)
    assert there.root == bundle_dir(tmp_path, bundle.digest) / "flight-delays-reference"
    assert there.model_dump(mode="json") == here.model_dump(mode="json") and there.python_env == here.python_env
    assert tree_sha256(there.repo_dir) == tree_sha256(here.repo_dir)
    assert (there.repo_dir / "run_experiment").stat().st_mode & 0o111
    assert job_task(job, tmp_path).root == there.root                  # the second job finds it checked
    assert job_budget(job).model_dump(mode="json") == job.budget_spec


def test_a_node_holding_a_different_task_bundle_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.failures import DataError
    from orchestrator.home import Home
    from orchestrator.study.job import job_task
    from orchestrator.study.node import run_on_node
    from orchestrator.tasks.bundle import bundle_dir, held_digest

    job = _job("flight-delays")
    bundle = job.task_bundle
    assert bundle is not None and bundle.executable == ("flight-delays/repo/run_experiment",
                                                        "flight-delays/repo/validate")
    job_task(job, tmp_path)
    held = bundle_dir(tmp_path, bundle.digest)
    assert held_digest(held, bundle.task_dir) == bundle.digest   # as written: the job's own bytes
    train = held / "flight-delays" / "repo" / "train.py"
    train.write_text(train.read_text() + "\n# this node's own edit\n")
    other = held_digest(held, bundle.task_dir)
    monkeypatch.setenv("SBX_CACHE", str(tmp_path))
    with pytest.raises(DataError) as exc:   # before any ledger, engine or container is touched
        run_on_node(None, Home(tmp_path / "home"), job, Slot("n", 0, "0"), {}, None, None)  # type: ignore[arg-type]
    message = str(exc.value)
    assert f"holds a different bundle at {held}: sha256:{other}" in message
    assert f"the job carries sha256:{bundle.digest}; refusing to run it" in message


def test_a_job_whose_task_or_budget_changed_on_the_way_is_refused(tmp_path: Path) -> None:
    from orchestrator.failures import DataError
    from orchestrator.study.job import budget_digest, job_budget, job_task

    job = _job("flight-delays")
    bundle = job.task_bundle
    assert bundle is not None
    files = {**bundle.files, "flight-delays/task.yaml": bundle.files["flight-delays/task.yaml"] + b"\n"}
    with pytest.raises(DataError, match=f"but the job says sha256:{bundle.digest}; refusing it"):
        job_task(replace(job, task_bundle=replace(bundle, files=files)), tmp_path)
    with pytest.raises(DataError, match="it carries task 'flight-delays' for a run of 'other'"):
        job_task(replace(job, task="other"), tmp_path)
    bigger = {**job.budget_spec, "cpu_seconds": job.budget_spec["cpu_seconds"] * 2}
    with pytest.raises(DataError, match=f"is sha256:{budget_digest(bigger)}, but the job says "
                                        f"sha256:{job.budget_digest}"):
        job_budget(replace(job, budget_spec=bigger))


def test_a_locked_tests_task_travels_as_its_lock(tmp_path: Path) -> None:
    """A tests task's job carries task.yaml (with the lock), tests.yaml, the instruction and the patch; the
    node makes the trees from the pinned sdists into its own cache and checks them."""
    from orchestrator.specs.task import TestsTaskSpec
    from orchestrator.study.job import job_task
    from orchestrator.tasks.materialise import tree_digest

    job = _job("sqlparse-strip-comments-keeps-hints", datasets=())
    bundle = job.task_bundle
    assert bundle is not None and set(bundle.files) == {f"{bundle.task_dir}/{n}" for n in (
        "task.yaml", "tests.yaml", "instruction.md", "reference.patch")}
    from orchestrator.tasks.environment import default_cache

    sdists = default_cache() / "sdists"
    cache = tmp_path / "node-cache"
    if sdists.is_dir():  # the suite's one sdist cache (the index is asked only when it lacks them)
        (cache / "sdists").mkdir(parents=True)
        for name in (bundle.spec["source"]["before_sdist"], bundle.spec["source"]["after_sdist"]):
            if (sdists / name).is_file():
                (cache / "sdists" / name).write_bytes((sdists / name).read_bytes())
    task = job_task(job, cache)
    assert isinstance(task, TestsTaskSpec) and task.lock is not None
    assert tree_digest(task.repo_dir)[0] == task.lock.repo.sha256 and task.repo_dir.is_relative_to(cache)


def test_a_job_of_a_task_named_by_its_folder_runs_it_and_another_bundle_is_refused(tmp_path: Path) -> None:
    """A study may name a user's task by its folder (`task: /path/to/my-task`): the job's bundle is that
    folder's, so the node runs it; a bundle of another task under that name is still refused."""
    from orchestrator import paths
    from orchestrator.failures import DataError
    from orchestrator.study.job import job_task

    folder = str(paths.tasks_root() / "nyc-arrival-delay")
    job = _job(folder)
    assert job_task(job, tmp_path).name == "nyc-arrival-delay"
    other = _job("flight-delays")
    with pytest.raises(DataError, match="it carries task 'flight-delays' for a run of"):
        job_task(replace(job, task_bundle=other.task_bundle), tmp_path)
