"""The cgroup layer against the real kernel: v1 (cpuacct + freezer) and v2 (this host's unified mount).

This machine is a cgroup v1 host with the unified (v2) hierarchy also mounted at /sys/fs/cgroup/unified,
so both implementations run against real kernel files here, not a fake tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.sandbox.cgroups import CgroupLayout, V1Node, V2Node

ROOT = Path("/sys/fs/cgroup")
BUSY = "import time\nt=time.process_time()\nwhile time.process_time()-t<{s}: pass\n"


def _writable(p: Path) -> bool:
    return p.is_dir() and os.access(p, os.W_OK)


def _v1_available() -> bool:
    return _writable(ROOT / "cpuacct") and _writable(ROOT / "freezer")


def _v2_root() -> Path | None:
    """A pure v2 host mounts the unified tree at the root; a hybrid v1 host (this one) under unified/."""
    for p in (ROOT, ROOT / "unified"):
        if (p / "cgroup.controllers").exists() and _writable(p):
            return p
    return None


def _need(ok: bool, what: str) -> None:
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"{what} is not available in CI")
        pytest.skip(f"{what} not available (needs root on a host with it)")


@pytest.fixture(params=["v1", "v2"])
def node(request: pytest.FixtureRequest) -> Iterator[V1Node | V2Node]:
    name = f"sbx-test-{uuid.uuid4().hex[:8]}"
    if request.param == "v1":
        _need(_v1_available(), "cgroup v1 cpuacct+freezer")
        n: V1Node | V2Node = V1Node(name, ROOT / "cpuacct" / name, ROOT / "freezer" / name)
        n.cpuacct.mkdir()
        n.freezer.mkdir()
    else:
        root = _v2_root()
        _need(root is not None, "a cgroup v2 hierarchy")
        n = V2Node(name, root / name)
        n.path.mkdir()
    try:
        yield n
    finally:
        n.remove()
        assert not n.exists()


def _spawn_into(node, code: str, tmp_path: Path) -> subprocess.Popen:
    # The child waits for a line on stdin so it starts working only after it was moved; the code is a file
    # so that multiprocessing's forkserver can import its functions.
    script = tmp_path / f"job_{uuid.uuid4().hex[:6]}.py"
    script.write_text("import sys\nif __name__ == '__main__': sys.stdin.readline()\n" + code)
    proc = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, cwd=tmp_path)
    node.add(proc.pid)
    assert proc.stdin is not None
    proc.stdin.write(b"go\n")
    proc.stdin.close()
    return proc


def test_usage_counts_exited_forkserver_and_unwaited_children(node, tmp_path: Path) -> None:
    code = (
        "import multiprocessing as mp, subprocess, sys, time\n"
        f"def work(_):\n    t=time.process_time()\n    while time.process_time()-t<0.5: pass\n"
        "if __name__ == '__main__':\n"
        "    ctx = mp.get_context('forkserver')\n"
        "    with ctx.Pool(2) as p: p.map(work, range(2))\n"
        f"    subprocess.Popen([sys.executable, '-c', {BUSY.format(s=0.5)!r}])\n"  # never waited for
        "    time.sleep(1.5)\n"
    )
    _spawn_into(node, code, tmp_path).wait(timeout=60)
    used = node.usage_seconds()
    # 3 x 0.5 s of real work plus interpreter start-ups; rusage-based meters see about 0 of the pool.
    assert 1.5 <= used <= 3.5, used


def test_kill_all_takes_setsid_descendants(node, tmp_path: Path) -> None:
    code = ("import subprocess, sys, time\n"
            "subprocess.Popen(['setsid', sys.executable, '-c', 'import time; time.sleep(600)'])\n"
            "time.sleep(600)\n")
    proc = _spawn_into(node, code, tmp_path)
    deadline = time.monotonic() + 10
    while len(node.pids()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(node.pids()) >= 2
    node.kill_all()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while node.pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert node.pids() == []


def test_child_usage_rolls_up_to_parent(node, tmp_path: Path) -> None:
    child = node.child("exp-1")
    proc = _spawn_into(child, BUSY.format(s=0.4), tmp_path)
    proc.wait(timeout=30)
    assert child.usage_seconds() >= 0.35
    assert node.usage_seconds() >= child.usage_seconds()
    child.remove()
    assert node.usage_seconds() >= 0.35  # the parent keeps what the removed child spent


def test_layout_detects_this_host() -> None:
    layout = CgroupLayout.detect()
    assert layout.version in (1, 2)
    node = layout.node_of_pid(os.getpid())
    assert node.usage_seconds() > 0


def test_kill_all_spares_the_pids_it_is_told_to(node, tmp_path: Path) -> None:
    """The meter kills what the agent started but not the agent program itself."""
    code = ("import subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
            "time.sleep(600)\n")
    parent = _spawn_into(node, code, tmp_path)
    deadline = time.monotonic() + 10
    while len(node.pids()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(node.pids()) == 2
    assert node.kill_all(spare={parent.pid}) == 1
    deadline = time.monotonic() + 10
    while node.pids() != [parent.pid] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert node.pids() == [parent.pid] and parent.poll() is None
    node.kill_all()
    parent.wait(timeout=10)
