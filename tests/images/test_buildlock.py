"""The host's image-build lock: a second process waits for the first one's build, a builder that calls
another builder does not wait on itself, and a killed holder leaves the host unlocked."""

from __future__ import annotations

import select
import subprocess
import sys
import textwrap

from orchestrator.buildlock import one_build_at_a_time

HOLD = textwrap.dedent("""
    import sys, time
    from orchestrator.buildlock import one_build_at_a_time
    with one_build_at_a_time("holder"):
        print("held", flush=True)
        time.sleep(float(sys.argv[1]))
        print("releasing", flush=True)
""")


def test_a_second_process_waits_until_the_first_build_is_done() -> None:
    with subprocess.Popen([sys.executable, "-c", HOLD, "1"], stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with one_build_at_a_time("waiter"):
            # the holder prints "releasing" while it still holds the lock: here it is already in the pipe
            ready, _, _ = select.select([holder.stdout], [], [], 0)
            assert ready and holder.stdout.readline().strip() == "releasing"


def test_a_builder_inside_a_builder_does_not_wait_on_itself() -> None:
    with one_build_at_a_time("outer"), one_build_at_a_time("inner"), one_build_at_a_time("innermost"):
        pass
    with one_build_at_a_time("again"):  # released at the outermost exit
        pass


def test_a_killed_holder_leaves_the_host_unlocked() -> None:
    with subprocess.Popen([sys.executable, "-c", HOLD, "600"], stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        holder.kill()
    with one_build_at_a_time("after"):  # would block for 600 s if the kernel kept a dead holder's lock
        pass
