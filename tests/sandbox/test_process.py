"""The one exec helper (`ContainerProcess`) in a real container: capped sinks, stdout apart from stderr, the
follow mode the grader reads its report with (a stream held open past the process's end), time limits, and
a strict start that raises when the engine refuses."""

from __future__ import annotations

import time
import uuid

import pytest

from orchestrator.failures import InfraError
from orchestrator.sandbox.container import ContainerSpec, create_box
from orchestrator.sandbox.process import CappedBuffer, ContainerProcess, TailBuffer

pytestmark = pytest.mark.docker


def test_capped_buffer_keeps_the_first_bytes_and_counts_the_rest() -> None:
    buf = CappedBuffer(5)
    for chunk in (b"abc", b"defg", b"hij"):
        buf.write(chunk)
    assert buf.raw() == b"abcde" and buf.bytes_seen == 10 and buf.over
    exact = CappedBuffer(3)
    exact.write(b"abc")
    assert exact.raw() == b"abc" and not exact.over


@pytest.fixture
def box(docker_client, sandbox_image):
    spec = ContainerSpec(kind="grader", image=sandbox_image, user="1000", workdir="/tmp", cpus=1.0,
                         memory_bytes=256 << 20, pids=64, tmpfs={"/tmp": "size=16m,mode=1777"},
                         run_id=f"t-{uuid.uuid4().hex[:8]}", name=f"sbx-test-proc-{uuid.uuid4().hex[:8]}",
                         hostname="t", entrypoint=[], deadline_s=120)
    b = create_box(docker_client, spec)
    b.start()
    yield b
    b.remove()


def _run(box, script: str, cap: int = 1 << 20, stdout_only: bool = True) -> ContainerProcess:
    proc = ContainerProcess(box, ["sh", "-c", script], user="1000", sink=CappedBuffer(cap), stdout_only=stdout_only)
    proc.start(strict=True)
    return proc


def test_follow_reads_stdout_to_its_end_and_drops_stderr(box) -> None:
    proc = _run(box, "echo out; echo err >&2; printf tail")
    assert proc.follow(30, grace_s=1.0) == (False, False)
    proc.join()
    assert proc.sink.raw() == b"out\ntail"
    assert proc.state() == (False, 0)
    merged = _run(box, "echo out; echo err >&2", stdout_only=False)
    assert merged.follow(30, grace_s=1.0) == (False, False)
    merged.join()
    assert sorted(merged.sink.raw().split()) == [b"err", b"out"]


def test_a_child_holding_the_stream_open_is_seen(box) -> None:
    """The process exits at once; a child it left keeps stdout open and writes later: held_open, on time."""
    proc = _run(box, "(sleep 5; echo forged) & echo real; exit 0")
    t0 = time.monotonic()
    assert proc.follow(30, grace_s=1.0) == (False, True)
    assert time.monotonic() - t0 < 4
    box.kill()
    proc.join(30)
    assert proc.sink.raw() == b"real\n"


def test_the_time_limit_holds_and_the_cap_is_kept(box) -> None:
    slow = _run(box, "echo start; sleep 60")
    t0 = time.monotonic()
    assert slow.follow(2, grace_s=1.0) == (True, False)
    assert 1.5 < time.monotonic() - t0 < 5
    flood = _run(box, "head -c 3000000 /dev/zero", cap=1000)
    assert flood.follow(30, grace_s=1.0) == (False, False)
    flood.join()
    assert len(flood.sink.raw()) == 1000 and flood.sink.over and flood.sink.bytes_seen == 3_000_000


def test_a_strict_start_raises_when_the_engine_refuses(box) -> None:
    proc = ContainerProcess(box, ["true"], user="1000", sink=TailBuffer(100))
    box.kill()
    time.sleep(0.5)
    with pytest.raises(InfraError):
        proc.start(strict=True)
