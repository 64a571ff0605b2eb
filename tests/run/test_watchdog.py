from orchestrator.run.watchdog import OUTCOME, StopReason, Watchdog
from orchestrator.specs import load_budget


def _dog(**changes):
    return Watchdog(load_budget("smoke").model_copy(update=changes), started=1000.0)


def test_wall_clock_stops_after_the_budgeted_minutes() -> None:
    dog = _dog(wall_clock_minutes=1, stall_seconds=1000)
    assert dog.check(1059.0) is None
    stop = dog.check(1061.0)
    assert stop is not None and stop.reason is StopReason.WALL_CLOCK


def test_stall_needs_both_silence_and_no_cpu() -> None:
    dog = _dog(stall_seconds=10)
    dog.observe(1005.0, output_bytes_seen=False, container_cpu=2.0)  # CPU progress counts as activity
    assert dog.check(1014.0) is None
    dog.observe(1014.0, output_bytes_seen=False, container_cpu=2.05)  # < 0.1 s: not progress
    stop = dog.check(1016.0)
    assert stop is not None and stop.reason is StopReason.STALL
    dog.observe(1016.5, output_bytes_seen=True, container_cpu=2.05)
    assert dog.check(1017.0) is None


def test_disk_cap_in_kilobytes() -> None:
    dog = _dog(disk_mb=16)
    assert dog.check(1001.0, workspace_kb=16 * 1024) is None
    stop = dog.check(1001.0, workspace_kb=16 * 1024 + 1)
    assert stop is not None and stop.reason is StopReason.DISK_CAP


def test_only_a_clean_agent_exit_is_a_normal_delivery() -> None:
    assert [r for r, failure in OUTCOME.items() if failure is None] == [StopReason.AGENT_DONE]
    assert set(OUTCOME) == set(StopReason)
