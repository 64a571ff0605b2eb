"""A tests task's agent works in the grader's world (issue 13 follow-up): its sandbox is the task image plus
the standard sandbox's layer (images/task-sandbox/Dockerfile), so it runs the repository's tests with the
task's Python and pins, and every Python it starts is metered, in real containers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tasks.conftest import shipped

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASK = "sqlparse-strip-comments-keeps-hints"  # also in test_task_runs.py: its task image is shared
AGENT = Path(__file__).parents[1] / "run" / "agents" / "task_tests.sh"


def _sbx(*args: str, env: dict[str, str]) -> str:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], env=env, capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, f"sbx {' '.join(args)}: {proc.stderr[-3000:]}"
    return proc.stdout


def test_the_agent_runs_the_tasks_tests_in_its_sandbox_and_its_python_is_metered(tmp_path: Path,
                                                                                  docker_client) -> None:
    from orchestrator.run.images import run_image
    from orchestrator.tasks.environment import default_cache, task_image

    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    task = shipped(TASK)
    built = _sbx("images", "build", "--task", TASK, env=env)
    sandbox_tag = next(line.split()[2] for line in built.splitlines() if line.split()[1] == "sandbox")
    assert sandbox_tag.startswith("sbx-task-sandbox:") and "sbx-sandbox:" not in built  # no standard images
    # the run's image is that sandbox, on top of the grader's image
    chosen = run_image(docker_client, task)
    assert chosen.tag == sandbox_tag and chosen.image_id == docker_client.images.get(sandbox_tag).id
    grader = docker_client.images.get(task_image(docker_client, task, default_cache()).tag)
    assert docker_client.images.get(sandbox_tag).labels["sbx.task_image"] == grader.id
    # `sbx tasks env build` builds the same images (environment, task, task sandbox): here all up to date
    env_built = _sbx("tasks", "env", "build", TASK, env=env).splitlines()
    assert env_built[0].startswith(f"environment {task.environment.digest()} ")  # type: ignore[union-attr]
    assert [line.rsplit(" in ", 1)[0] for line in env_built[1:]] == [
        f"  task {TASK}: {grader.tags[0]} up to date", f"  sandbox {TASK}: {sandbox_tag} up to date"], env_built

    record = json.loads(_sbx("run", "--task", TASK, "--agent-command", str(AGENT), "--json", env=env))
    assert record["status"] == "audited", (record["failure_reason"], record["events"][-3:])
    assert record["image"] == chosen.image_id
    log = (tmp_path / "home" / "runs" / record["run_id"] / "delivered" / "workspace" / "agent.log").read_text()
    python = task.environment.python  # type: ignore[union-attr]
    assert f"Python {python}." in log, log
    assert "imported /workspace/sqlparse/__init__.py gate True" in log, log  # the agent's tree, through the gate
    assert "61 passed" in log and "pytest exit 0" in log, log
    assert "burn exit 0" in log, log
    # the 3 CPU-s child, pytest and the other Pythons ran in the metered `py` cgroup
    assert record["meta"]["cpu_seconds_py"] >= 3.0, record["meta"]
    assert record["cpu_seconds_metered"] >= record["meta"]["cpu_seconds_py"] >= 3.0
    assert record["meta"]["cpu_seconds_agent"] < 0.5, record["meta"]  # the bash agent itself only waited
    print(f"task sandbox run: py {record['meta']['cpu_seconds_py']:.2f} CPU-s, metered "
          f"{record['cpu_seconds_metered']:.2f}, agent {record['meta']['cpu_seconds_agent']:.2f}")
    # the delivery did not fix the bug (the logs it left are not tests): graded fail, as noop is
    assert record["outcome"] is False and record["outcome_reason"] == "tests_failed"


def test_a_task_whose_image_cannot_be_built_leaves_the_run_planned(tmp_path: Path, docker_client, home) -> None:
    """The editable install fails (a build backend the offline build cannot have): a ConfigError at prepare
    that says how to build ahead; the run is never started (no infra retry)."""
    import yaml

    from orchestrator.agents import resolve_agent
    from orchestrator.failures import ConfigError
    from orchestrator.ledger import Ledger, RunState
    from orchestrator.run import RunLifecycle, RunRequest
    from orchestrator.specs import load_budget
    from tests.tasks.conftest import write_calc_task

    root = write_calc_task(tmp_path / "calc-broken-build")
    spec = yaml.safe_load((root / "task.yaml").read_text())
    (root / "task.yaml").write_text(yaml.safe_dump({**spec, "name": "calc-broken-build", "install": "editable"}))
    (root / "repo" / "pyproject.toml").write_text('[build-system]\nrequires = ["no-such-backend-sbx"]\n'
                                                  'build-backend = "no_such_backend_sbx"\n')
    req = RunRequest(task=shipped(root), budget=load_budget("smoke"), agent=resolve_agent("noop"),
                     data_dir=tmp_path, datasets=())
    with Ledger(home.ledger_path) as ledger:
        lifecycle = RunLifecycle(home, ledger, docker_client)
        run_id = lifecycle.plan(req)
        with pytest.raises(ConfigError, match=r"its sandbox image(.|\n)*sbx images build --task calc-broken-build") as err:
            lifecycle.run(req, run_id)
        assert "building sbx-task:" in str(err.value) and "No module named 'no_such_backend_sbx'" in str(err.value), str(err.value)
        assert ledger.get_run(run_id).status == RunState.PLANNED
