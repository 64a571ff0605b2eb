"""The pieces of a tests task's run that need no engine: its workspace, the oracle's per-run file, and the
grading converted to the ledger's outcome (a refused tree included)."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.agents import builtin_agent
from orchestrator.agents.oracle_payload import oracle_for_task
from orchestrator.failures import ConfigError
from orchestrator.run.evaluate_tests import graded_outcome
from orchestrator.sandbox.workspace import build_workspace
from orchestrator.specs import load_budget
from orchestrator.specs.task import load_tests_task
from orchestrator.tasks.grade_tree import Graded
from orchestrator.tasks.verdict import RunFacts, Verdict, combine

from .conftest import CALC_TASK as TASK  # the fixture task: its trees are committed, no index is asked


def test_the_workspace_is_the_repo_with_the_instruction_and_never_the_hidden_tests(tmp_path: Path) -> None:
    task = load_tests_task(TASK)
    dest = tmp_path / "ws"
    commit = build_workspace(task, load_budget("smoke"), dest, "sbx/r-1", tmp_path / "no-data")
    assert re.fullmatch(r"[0-9a-f]{40}", commit)
    assert (dest / "program.md").read_text() == task.path(task.instruction).read_text()
    assert (dest / "BUDGET.md").is_file()
    for hidden in task.hidden_dir.rglob("*"):
        if hidden.is_file():
            rel = hidden.relative_to(task.hidden_dir)
            inside = dest / rel
            assert not inside.exists() or inside.read_bytes() != hidden.read_bytes(), rel
    status = subprocess.run(["git", "-C", str(dest), "status", "--porcelain", "--ignored"], capture_output=True,
                            text=True, check=True).stdout
    assert status == ""  # everything, ignored files included, is in the starting commit
    repo_files = {p.relative_to(task.repo_dir) for p in task.repo_dir.rglob("*") if p.is_file()}
    assert repo_files <= {p.relative_to(dest) for p in dest.rglob("*") if p.is_file() and ".git" not in p.parts}


def test_a_repo_with_its_own_program_md_is_refused(tmp_path: Path) -> None:
    task = load_tests_task(TASK)
    repo = tmp_path / "bundle" / "repo"
    shutil.copytree(task.root, tmp_path / "bundle")
    (repo / "program.md").write_text("mine")
    copy = load_tests_task(tmp_path / "bundle")
    with pytest.raises(ConfigError, match="program.md"):
        build_workspace(copy, load_budget("smoke"), tmp_path / "ws", "b", tmp_path)


def test_the_oracles_run_file_carries_this_tasks_patch_and_the_builtin_carries_none(tmp_path: Path) -> None:
    task = load_tests_task(TASK)
    agent = oracle_for_task(builtin_agent("oracle"), task, tmp_path / "run")
    assert agent.host_path == tmp_path / "run" / "oracle.py" and agent.command == ("python", "/agent/oracle.py")
    blob = re.search(r'^PAYLOAD = "([A-Za-z0-9+/=]+)"', agent.host_path.read_text(), re.MULTILINE)
    assert blob is not None
    payload = json.loads(base64.b64decode(blob.group(1)))
    assert payload == {"kind": "patch", "text": task.path(task.reference_patch).read_text()}
    unfilled = subprocess.run([sys.executable, str(builtin_agent("oracle").host_path)], capture_output=True, text=True,
                              check=False)
    assert unfilled.returncode == 2 and "no reference solution" in unfilled.stderr
    bare = task.model_copy(update={"reference_patch": None, "solution": None})
    with pytest.raises(ConfigError, match="nothing to apply"):
        oracle_for_task(builtin_agent("oracle"), bare, tmp_path / "other")


def test_a_grading_becomes_the_ledgers_outcome() -> None:
    task = load_tests_task(TASK)
    f2p, p2p = task.grader.fail_to_pass, task.grader.pass_to_pass
    tests = {t: "passed" for t in (*f2p, *p2p)}
    ok = Verdict(True, "passed", "all passed", tests)
    bad = Verdict(False, "tests_failed", "one failed", {**tests, f2p[0]: "failed"})
    facts = [RunFacts(exit_code=0, seconds=3.0), RunFacts(exit_code=1, seconds=4.0)]
    o = graded_outcome(task, Graded(combine([ok, bad]), {"copied": 1}, facts, 7.5), "sbx-task:x")
    assert (o.passed, o.reason, o.agree, o.repeats, o.seconds) == (False, "tests_failed", False, 2, 7.5)
    assert o.flaky == {f2p[0]: {"passed": 1, "failed": 1}} and o.detail == "one failed"
    assert [(g.repeat, g.passed, g.exit_code, g.seconds) for g in o.gradings] == [(1, True, 0, 3.0), (2, False, 1, 4.0)]
    refused = graded_outcome(task, Graded(combine([Verdict(False, "tree_refused", "too many files")]), seconds=0.2), "i")
    assert (refused.passed, refused.reason, refused.gradings[0].exit_code) == (False, "tree_refused", None)
