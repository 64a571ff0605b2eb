"""The host's image-build locks: a second process waits for the first one's build of the same image and
not for a build of another, a builder that calls another builder does not wait on itself, and a killed
holder leaves the host unlocked."""

from __future__ import annotations

import select
import subprocess
import sys
import textwrap

from orchestrator.buildlock import one_build_at_a_time

HOLD = textwrap.dedent("""
    import sys, time
    from orchestrator.buildlock import one_build_at_a_time
    with one_build_at_a_time(sys.argv[2]):
        print("held", flush=True)
        time.sleep(float(sys.argv[1]))
        print("releasing", flush=True)
""")


def _holder(seconds: float, what: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", HOLD, str(seconds), what], stdout=subprocess.PIPE, text=True)


def test_a_second_process_waits_until_the_first_build_of_the_same_image_is_done() -> None:
    with _holder(1, "sbx-task:same-image") as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with one_build_at_a_time("sbx-task:same-image"):
            # the holder prints "releasing" while it still holds the lock: here it is already in the pipe
            ready, _, _ = select.select([holder.stdout], [], [], 0)
            assert ready and holder.stdout.readline().strip() == "releasing"


def test_a_build_of_another_image_does_not_wait() -> None:
    with _holder(600, "sbx-fleet:a-long-build") as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        try:
            with one_build_at_a_time("sbx-task:a-small-one"):  # would block for 600 s behind the fleet build
                assert holder.poll() is None
        finally:
            holder.kill()


def test_a_builder_inside_a_builder_does_not_wait_on_itself() -> None:
    with one_build_at_a_time("outer"), one_build_at_a_time("inner"), one_build_at_a_time("outer"):
        pass
    with _holder(0, "outer") as other:  # released at the outermost exit: another process takes it at once
        assert other.wait(timeout=60) == 0


def test_a_killed_holder_leaves_the_host_unlocked() -> None:
    with _holder(600, "sbx-task:killed") as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        holder.kill()
    with one_build_at_a_time("sbx-task:killed"):  # would block for 600 s if the kernel kept a dead holder's lock
        pass
