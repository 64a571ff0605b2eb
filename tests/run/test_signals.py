"""Containers never outlive the process that watches them (issue 11, class 9): real signals to real `sbx run`,
`sbx study run` and `sbx score` processes; and a SIGKILLed driver's sandbox ends by itself at its deadline."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.ledger import Ledger

pytestmark = [pytest.mark.docker, pytest.mark.slow]

AGENTS = Path(__file__).resolve().parents[1] / "sandbox" / "agents"
BUDGET = ("name: signals\ncpu_seconds: 30\nhard_stop_cpu_seconds: 60\nexperiments: 2\nexperiment_timeout_s: 10\n"
          "cores: 1\nmemory_mb: 768\npids: 256\nwall_clock_minutes: {wall}\nstall_seconds: 600\ndisk_mb: 256\n")


def _start(tmp_path: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`sbx ARGS` in its own session, its output to files (tmp_path/out, tmp_path/err)."""
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home"), **(env_extra or {})}
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        return subprocess.Popen([sys.executable, "-m", "orchestrator", *args], env=env, text=True,
                                stdout=out, stderr=err, start_new_session=True)


def _err(tmp_path: Path) -> str:
    return (tmp_path / "err").read_text()[-3000:]


def _until(what: Callable[[], object], timeout_s: float, every_s: float = 0.5, tmp_path: Path | None = None) -> object:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        value = what()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s}s" + (f"; sbx said: {_err(tmp_path)}" if tmp_path else ""))


def _runs(tmp_path: Path, status: str | None = None) -> list:
    path = tmp_path / "home" / "ledger.sqlite"
    if not path.exists():
        return []
    with Ledger(path) as led:
        return led.list_runs(status=status)


def _containers(docker_client, run_ids: list[str], running_only: bool = False) -> list:
    found = []
    for run_id in run_ids:
        found += docker_client.containers.list(all=not running_only, sparse=True, filters={"label": f"sbx.run={run_id}"})
    return found


def _budget(tmp_path: Path, wall: float) -> Path:
    path = tmp_path / "signals.yaml"
    path.write_text(BUDGET.format(wall=wall))
    return path


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_sbx_run_stopped_by_a_signal_cleans_up_and_records_an_infra_failure(tmp_path, small_flight_data, built_images,
                                                                            docker_client, sig) -> None:
    proc = _start(tmp_path, "run", "--agent-command", str(AGENTS / "sleeper.sh"), "--budget",
                  str(_budget(tmp_path, 5)), "--data-dir", str(small_flight_data), "--no-score")
    try:
        running = _until(lambda: _runs(tmp_path, "running"), 120, tmp_path=tmp_path)
        run_id = running[0].run_id  # type: ignore[index]
        assert _containers(docker_client, [run_id], running_only=True)
        t0 = time.monotonic()
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
        stopped_in = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 128 + sig, _err(tmp_path)
    assert stopped_in < 30
    run = _runs(tmp_path)[0]
    assert run.status == "failed" and run.failure_class == "infra" and run.counted is False
    assert signal.Signals(sig).name in (run.failure_reason or "")
    assert _containers(docker_client, [run_id]) == []
    assert docker_client.volumes.list(filters={"label": f"sbx.run={run_id}"}) == []


def test_sbx_study_run_stopped_by_sigterm_ends_its_runs_and_removes_their_containers(tmp_path, small_flight_data,
                                                                                    built_images, docker_client) -> None:
    spec = tmp_path / "stopme.yaml"
    spec.write_text(f"name: stopme\nbudget: {_budget(tmp_path, 5)}\nrepeats: 2\ndatasets: [holdout]\n"
                    f"pairings:\n  - agent_command: {AGENTS / 'sleeper.sh'}\nbackend: {{type: local, slots: 2}}\n")
    proc = _start(tmp_path, "study", "run", str(spec), "--data-dir", str(small_flight_data))
    try:
        _until(lambda: len(_runs(tmp_path, "running")) == 2, 180)
        run_ids = [r.run_id for r in _runs(tmp_path)]
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 128 + signal.SIGTERM, _err(tmp_path)
    runs = _runs(tmp_path)
    assert len(runs) == 2 and all(r.status == "failed" and r.failure_class == "infra" and not r.counted for r in runs)
    assert _containers(docker_client, run_ids) == []
    status = json.loads(subprocess.run([sys.executable, "-m", "orchestrator", "study", "status", "stopme", "--json"],
                                       env={**os.environ, "SBX_HOME": str(tmp_path / "home")}, capture_output=True,
                                       text=True, check=True).stdout)
    assert status["running_pid"] is None
    assert all(counts.get("running", 0) == 0 for counts in status["pairings"].values()), status


def test_sbx_score_stopped_by_sigterm_removes_its_scorer(tmp_path, small_flight_data, built_images, docker_client) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("import time\ntime.sleep(3600)\n")
    owner: list[str] = []

    def mine() -> list:  # other work on this machine runs scorers too: ours carry our process as their owner
        return docker_client.containers.list(all=True, sparse=True, filters={"label": [f"sbx.owner={owner[0]}",
                                                                                       "sbx.kind=scorer"]})

    proc = _start(tmp_path, "score", str(repo), "--data-dir", str(small_flight_data))
    owner.append(f"{socket.gethostname()}:{proc.pid}")
    try:
        scorer = _until(mine, 120, tmp_path=tmp_path)
        time.sleep(2)  # the scored code is running now
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 128 + signal.SIGTERM, _err(tmp_path)
    assert scorer and mine() == []


def test_a_sigkilled_driver_leaves_nothing_running_past_the_sandboxs_deadline(tmp_path, small_flight_data, built_images,
                                                                              docker_client) -> None:
    # 15 s of wall clock and a 20 s margin (SBX_SANDBOX_MARGIN_S, the product's is 60 s): the sandbox's deadline
    # is 15 + 20 + 1.5 s after it started, past the time a loaded host takes to get the run going
    wall_min, margin = 0.25, 20
    proc = _start(tmp_path, "run", "--agent-command", str(AGENTS / "sleeper.sh"), "--budget",
                  str(_budget(tmp_path, wall_min)), "--data-dir", str(small_flight_data), "--no-score",
                  env_extra={"SBX_SANDBOX_MARGIN_S": str(margin)})
    run_id = ""
    try:
        running = _until(lambda: _runs(tmp_path, "running"), 120, tmp_path=tmp_path)
        run_id = running[0].run_id  # type: ignore[index]
        container = _containers(docker_client, [run_id], running_only=True)[0]
        container.reload()
        started = container.attrs["State"]["StartedAt"]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = 15 + margin + 1.5
        _until(lambda: not _containers(docker_client, [run_id], running_only=True), deadline + 30, every_s=1)
        container.reload()
        state = container.attrs["State"]
        from datetime import datetime

        def at(text: str) -> float:
            return datetime.fromisoformat(text[:26].rstrip("Z") + "+00:00").timestamp()

        lived = at(state["FinishedAt"]) - at(started)
        assert deadline - 1 <= lived < deadline + 15, (lived, state)
    finally:
        if proc.poll() is None:
            proc.kill()
        for c in _containers(docker_client, [run_id]) if run_id else []:
            c.remove(force=True)
        for v in docker_client.volumes.list(filters={"label": f"sbx.run={run_id}"}) if run_id else []:
            v.remove(force=True)
