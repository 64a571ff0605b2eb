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
