"""The host meter and the gate against a real sandbox container: where gated Python processes land."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.sandbox.cgroups import CgroupLayout
from orchestrator.sandbox.docker import DockerSandbox, SandboxSpec
from orchestrator.sandbox.experiments import ExperimentService
from orchestrator.sandbox.hostfs import HostTree
from orchestrator.sandbox.meter import GATE_SOCKET, Meter
from orchestrator.sandbox.workspace import tar_for_agent
from orchestrator.specs import Budget

pytestmark = pytest.mark.docker

BUDGET = Budget(name="meter-test", cpu_seconds=120, hard_stop_cpu_seconds=240, experiments=2, experiment_timeout_s=30,
                cores=1, memory_mb=1024, pids=256, wall_clock_minutes=5)

# An experiment whose Python child runs in a new session, burns 1 CPU-s, then would sleep for an hour. The
# parent waits until the child says it has burnt its second (it passed the gate before its first line ran),
# however slowly a loaded machine gets there (up to 25 s of the experiment's 30).
TRAIN = """\
import os, subprocess, sys, time
child = ("import time\\nt = time.process_time()\\nwhile time.process_time() - t < 1.0: pass\\n"
         "open('/tmp/child-burnt', 'w').close()\\ntime.sleep(3600)\\n")
subprocess.Popen([sys.executable, "-c", child], start_new_session=True)
end = time.monotonic() + 25
while not os.path.exists("/tmp/child-burnt") and time.monotonic() < end:
    time.sleep(0.05)
print("Eval AUC: 0.5" if os.path.exists("/tmp/child-burnt") else "child too slow")
"""


@pytest.fixture
def metered_sandbox(docker_client, built_images) -> Iterator[dict[str, Any]]:
    sock_dir = Path(tempfile.mkdtemp(prefix="sbx-test-"))
    os.chmod(sock_dir, 0o755)
    ws = Path(tempfile.mkdtemp(prefix="sbx-test-ws-"))
    (ws / "train.py").write_text(TRAIN)
    events: list[tuple[str, dict[str, Any]]] = []
    sandbox = DockerSandbox(docker_client, SandboxSpec(f"test-meter-{uuid.uuid4().hex[:8]}", built_images["sandbox"].image_id,
                                                       BUDGET, "0", sock_dir))
    meter = None
    try:
        sandbox.create(tar_for_agent(ws))
        pid = sandbox.start()
        box = sandbox.box
        assert box is not None
        layout = CgroupLayout.detect()
        meter = Meter(box.cgroup(layout), BUDGET, sock_dir, lambda k, d: events.append((k, d)), box.kill)
        meter.start()
        yield {"sandbox": sandbox, "box": box, "meter": meter, "events": events, "layout": layout, "pid": pid,
               "sock_dir": sock_dir}
    finally:
        if meter is not None:
            meter.stop()
            if sandbox.box is not None:
                sandbox.box.kill()
            meter.remove_cgroups()
        sandbox.remove()
        shutil.rmtree(sock_dir, ignore_errors=True)
        shutil.rmtree(ws, ignore_errors=True)


def test_python_child_of_an_experiment_stays_in_the_experiment_cgroup(metered_sandbox, docker_client) -> None:
    s = metered_sandbox
    records = []
    service = ExperimentService(s["box"], s["meter"], BUDGET, r"Eval AUC: ([0-9.]+)", "auc", s["sock_dir"],
                                lambda k, d: s["events"].append((k, d)), lambda rec, _train: records.append(rec),
                                workspace=HostTree(s["sandbox"].workspace_host_path()))
    try:
        record = service.run("child in a new session")
    finally:
        service.close()
    assert record.status == "ok" and record.eval_score == 0.5, record.output_tail
    # The child's CPU is the experiment's, and the child died with the experiment instead of moving up to `py`.
    assert record.cpu_seconds >= 1.0, record
    assert any(kind == "experiment_leftovers_killed" for kind, _ in s["events"]), s["events"]
    ps = s["box"].container.exec_run(["bash", "-c", "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"],
                                     user="agent").output.decode()
    assert "sleep" in ps, ps  # the listing worked (it shows the container's own sleep)
    assert "time.sleep(3600)" not in ps, ps


def test_plain_python_lands_in_py_and_a_caller_outside_the_container_is_refused(metered_sandbox) -> None:
    s = metered_sandbox
    r = s["box"].container.exec_run(
        ["python", "-c", "print([l for l in open('/proc/self/cgroup') if ':cpuacct' in l or l.startswith('0::')][0])"],
        user="agent")
    assert r.exit_code == 0 and r.output.decode().strip().endswith("/py"), r.output
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(str(s["sock_dir"] / GATE_SOCKET))
    conn.sendall(b"GATE -\n")
    assert conn.recv(4096).startswith(b"DENY caller is not in this sandbox")
    conn.close()
    assert ("gate_foreign_caller", {"pid": os.getpid()}) in s["events"]


def test_python_fails_closed_when_the_meter_stops_answering(metered_sandbox) -> None:
    s = metered_sandbox
    s["meter"].close_gate()
    r = s["box"].container.exec_run(["python", "-c", "print('user code ran')"], user="agent")
    assert r.exit_code == 97, r.output
    assert b"user code ran" not in r.output
    assert b"the CPU meter is unreachable" in r.output
