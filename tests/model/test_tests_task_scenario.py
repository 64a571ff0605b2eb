"""A tests task's stand-in scenario, played by hand: its shell step, run with bash in a copy of the task's
repo, applies the task's reference patch and commits it; the control's step changes nothing. And the
stand-in sends that step whole through a CLI's shell tool (pi's `bash`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from orchestrator.agents.oracle_payload import oracle_payload
from orchestrator.model import scenario_for_tests_task
from orchestrator.model.conversation import Conversation, Tool
from orchestrator.model.reply import decide
from orchestrator.model.scenario import PATCH_END
from tests.tasks.conftest import shipped

TASK = "sqlparse-strip-comments-keeps-hints"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def _repo(tmp_path: Path) -> Path:
    task = shipped(TASK)
    repo = tmp_path / "workspace"
    shutil.copytree(task.repo_dir, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    return repo


def test_the_fix_step_applies_the_reference_patch_and_commits_it(tmp_path: Path) -> None:
    task = shipped(TASK)
    patch = oracle_payload(task)["text"]
    scenario = scenario_for_tests_task(TASK, patch)
    assert [s.finish is None for s in scenario.steps] == [True, False]
    repo = _repo(tmp_path)
    done = subprocess.run(["bash", "-c", scenario.steps[0].shell or ""], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Applied patch sqlparse/filters/others.py cleanly." in done.stderr
    assert _git(repo, "log", "--format=%s").splitlines() == [f"fix {TASK}", "start"]
    assert _git(repo, "status", "--porcelain") == ""
    # the commit is the reference patch, nothing more: reverting it leaves the starting tree
    assert _git(repo, "diff", "--name-only", "HEAD~1").split() == list(task.source.fix_files)  # type: ignore[union-attr]
    subprocess.run(["git", "apply", "-R", "--check", "-"], cwd=repo, input=patch, text=True, check=True)


def test_the_control_step_changes_nothing(tmp_path: Path) -> None:
    scenario = scenario_for_tests_task(TASK, None)
    repo = _repo(tmp_path)
    done = subprocess.run(["bash", "-c", scenario.steps[0].shell or ""], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0 and "start" in done.stdout, done.stderr
    assert _git(repo, "log", "--format=%s").splitlines() == ["start"] and _git(repo, "status", "--porcelain") == ""


def test_named_tests_are_run_after_the_change_with_the_sandboxs_python() -> None:
    scenario = scenario_for_tests_task(TASK, None, tests=("tests/test_format.py", "tests/a b.py"))
    assert [s.shell for s in scenario.steps[1:2]] == [
        "PYTHONDONTWRITEBYTECODE=1 python -m pytest -q -p no:cacheprovider tests/test_format.py 'tests/a b.py'"]
    assert scenario.steps[2].finish == "Looked; changed nothing." and len(scenario.steps) == 3


def test_a_patch_holding_the_delimiter_is_refused() -> None:
    with pytest.raises(ValueError, match=PATCH_END):
        scenario_for_tests_task(TASK, f"--- a/x\n+++ b/x\n{PATCH_END}\n")


def test_the_stand_in_sends_the_step_whole_through_the_shell_tool() -> None:
    patch = oracle_payload(shipped(TASK))["text"]
    scenario = scenario_for_tests_task(TASK, patch)
    bash = Tool("bash", {"type": "object", "properties": {"command": {"type": "string"},
                                                         "timeout": {"type": "number"}}, "required": ["command"]})
    conv = Conversation(api="anthropic", model="m", stream=True, tools=[bash], system_text="", prompt_text="",
                        tool_calls_made=0, assistant_turns=0, input_tokens=10, prefix_tokens=0, wants_cache=False,
                        wants_reasoning=False)
    reply = decide(conv, scenario, seed=0)
    assert (reply.kind, reply.tool, reply.step) == ("tool", "bash", 0)
    assert reply.arguments is not None and reply.arguments["command"] == scenario.steps[0].shell
    assert patch in reply.arguments["command"]
