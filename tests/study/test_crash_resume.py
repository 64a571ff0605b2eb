"""Kill the driver with SIGKILL at several points of a study; running it again must finish the study with
every planned run counted exactly once, the aborted attempts kept as infra (counted = false), and nothing
left behind: no container, volume, socket folder or metering cgroup."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from orchestrator.ledger import Ledger

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENTS = Path(__file__).resolve().parents[1] / "sandbox" / "agents"


def _study_file(tmp_path: Path) -> Path:
    p = tmp_path / "crash.yaml"
    p.write_text(
        "name: crash\ntask: flight-delays\nbudget: smoke\nrepeats: 3\ndatasets: [holdout]\ninfra_retries: 3\n"
        f"pairings:\n  - agent: noop\n  - agent_command: {AGENTS / 'slow.sh'}\n    label: slow\n"
        "backend: {type: local, slots: 2}\n"
    )
    return p


def _start(spec: Path, env: dict[str, str], data: Path, log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen([sys.executable, "-m", "orchestrator", "study", "run", str(spec), "--data-dir",
                                 str(data)], env=env, stdout=out, stderr=out)


def _statuses(ledger_path: Path) -> list[str]:
    if not ledger_path.exists():
        return []
    try:
        with Ledger(ledger_path, create=False) as led:
            return [str(r.status) for r in led.list_runs()]
    except Exception:  # the ledger may be mid-migration on the first start
        return []


def _kill_when(proc: subprocess.Popen, ledger_path: Path, wanted: str, timeout_s: float = 120) -> bool:
    """SIGKILL the driver as soon as some run is in state `wanted` (or when the time is up)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and proc.poll() is None:
        if wanted in _statuses(ledger_path):
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            return True
        time.sleep(0.05)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    return False


def test_sigkill_at_several_points_loses_and_duplicates_nothing(tmp_path, small_flight_data, docker_client, built_images):
    home = tmp_path / "home"
    env = {**os.environ, "SBX_HOME": str(home), "SLOW_AGENT_SECONDS": "5"}
    spec, log = _study_file(tmp_path), tmp_path / "driver.log"
    ledger_path = home / "ledger.sqlite"
    caught = []
    for point in ("running", "delivered", "starting"):
        caught.append(_kill_when(_start(spec, env, small_flight_data, log), ledger_path, point))
    assert caught[0], "never saw a run in state running"
    final = subprocess.run([sys.executable, "-m", "orchestrator", "study", "run", str(spec), "--data-dir",
                            str(small_flight_data)], env=env, capture_output=True, text=True, timeout=900)
    assert final.returncode == 0, final.stderr[-3000:]

    with Ledger(ledger_path, create=False) as led:
        study = led.get_study_by_name("crash")
        runs = led.list_runs(study_id=study.study_id)
        counted = defaultdict(list)
        for r in runs:
            if r.counted:
                counted[(r.pairing, r.repeat)].append(r)
        assert sorted(counted) == sorted((p, k) for p in ("noop", "slow") for k in (1, 2, 3))
        assert all(len(v) == 1 for v in counted.values()), {k: [r.run_id for r in v] for k, v in counted.items()}
        assert all(v[0].status == "audited" for v in counted.values())
        aborted = [r for r in runs if not r.counted]
        assert aborted, "the kill mid-run should have left an aborted attempt"
        assert all(r.status == "failed" and r.failure_class == "infra" for r in aborted)
        # every retry points at the attempt it replaced
        assert all(led.get_run(r.retry_of).failure_class == "infra" for r in runs if r.retry_of)
        scored = led.scores.runs_scored_on("holdout")
        assert {v[0].run_id for v in counted.values()} <= scored

    assert docker_client.containers.list(all=True, sparse=True, filters={"label": f"sbx.study={study.study_id}"}) == []
    assert docker_client.volumes.list(filters={"label": f"sbx.study={study.study_id}"}) == []
    run_tails = {r.run_id[-8:] for r in runs}
    assert not [d for d in Path("/tmp").glob("sbx-*-*") if d.name.split("-")[1] in run_tails]
    assert _orphan_meter_cgroups(docker_client) == []


def _orphan_meter_cgroups(docker_client, settle_s: float = 10) -> list[Path]:
    """Metering cgroups whose container is gone. Other tests may be starting and removing containers beside
    this one (parallel workers): a cgroup seen before its container is listed, or one whose container its
    owner is removing right now, is not an orphan; one still there `settle_s` later, with no container, is."""
    def orphans() -> list[Path]:
        seen = list(Path("/sys/fs/cgroup").glob("*/docker/*/py"))
        live = {c.id for c in docker_client.containers.list(all=True, sparse=True)}
        return [p for p in seen if p.parent.name not in live and p.exists()]

    found = orphans()
    if found:
        time.sleep(settle_s)
        found = [p for p in orphans() if p in found]
    return found
