"""`sbx tasks verify` on real task bundles, end to end in real containers: the reference patch passes, the
unmodified repository fails, three gradings of each agree."""

from __future__ import annotations

import pytest

from orchestrator import paths
from orchestrator.tasks.environment import default_cache
from orchestrator.tasks.verify import verify_task
from tests.tasks.conftest import shipped

from .conftest import leftovers

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# three libraries, three fast suites
TASKS = ["humanize-naturalsize-float-bytes", "sqlparse-split-begin-transaction", "markdown-inline-comment-placeholder"]


@pytest.mark.parametrize("name", TASKS)
def test_task_verifies(name: str, docker_client) -> None:
    task = shipped(paths.REPO_ROOT / "tasks" / name)
    check = verify_task(docker_client, task, default_cache(), repeats=3)
    assert check.ok, check.problems
    assert len(check.oracle.result.verdicts) == 3 and all(v.passed for v in check.oracle.result.verdicts)
    assert check.oracle.result.agree and check.noop.result.agree
    noop = check.noop.result.verdicts[0]
    assert noop.reason == "tests_failed"
    f2p = task.grader.fail_to_pass
    assert all(noop.tests[i] in ("failed", "error") for i in f2p)
    assert noop.counts(task.grader.pass_to_pass) == (len(task.grader.pass_to_pass),) * 2
    assert leftovers(docker_client) == []
