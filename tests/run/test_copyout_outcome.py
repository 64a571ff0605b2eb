"""A copy-out that fails because of the workspace is the agent's counted failure; when sbx cannot copy even an
empty volume, the failure is ours (issue 11, class 5, copy-out half). Real runs, real copier containers."""

from __future__ import annotations

import pytest

from orchestrator.sandbox.copyout import CopyLimits

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _volumes(docker_client, run_id: str) -> list:
    return docker_client.volumes.list(filters={"label": f"sbx.run={run_id}"})


def test_a_workspace_too_heavy_to_copy_in_time_is_a_counted_agent_failure(run_agent, docker_client) -> None:
    # 768 MB of noise alone (512 MB kept) copied out in 4.1 s on this 2-core machine when quiet, and in under 4 s
    # on CI's faster one, so it did not always time out. With 20,000 small files beside it the copy takes
    # 12.4 s here when quiet (most of it the host's per-file work), an empty workspace 0.45 s (1.6 s under
    # load): a 4 s limit sits 3x from each
    record = run_agent("heavy.sh", disk_mb=1024, request={"copy_limits": CopyLimits(timeout_s=4)})
    assert record["status"] == "failed" and record["failure_class"] == "agent", record["failure_reason"]
    assert record["counted"] is True
    assert record["failure_reason"].startswith("copyout_timeout: "), record["failure_reason"]
    event = next(e["detail"] for e in record["events"] if e["kind"] == "copyout_failed")
    assert event["reason"] == "copyout_timeout" and event["control_seconds"] < 8
    assert _volumes(docker_client, record["run_id"]) == []  # the workspace and the control volume are gone


def test_when_even_an_empty_volume_cannot_be_copied_the_failure_is_ours(run_agent, docker_client) -> None:
    # 1 us: however fast the machine, the limit has passed once the go is sent (one engine call), so no copy of
    # even nothing can succeed, the run's (its copier started ahead) nor the control's. At the 10 ms used before,
    # a fast CI machine had the copier's own wait for the go run out first; that is the same time limit too
    record = run_agent("noop", request={"copy_limits": CopyLimits(timeout_s=1e-6)})
    assert record["status"] == "failed" and record["failure_class"] == "infra", record["failure_reason"]
    assert record["counted"] is False
    event = next(e["detail"] for e in record["events"] if e["kind"] == "copyout_failed")
    assert event["reason"] == "copyout_timeout", event
    assert event["control"].startswith("failed: CopyOutTimeout: "), event["control"]
    assert _volumes(docker_client, record["run_id"]) == []
