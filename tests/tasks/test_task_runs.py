"""Tests tasks through the one run lifecycle, as a user types it: `sbx run --task` with the oracle, `sbx study run` over
several tasks with oracle, noop and a scripted agent that solves one task of three, the export and the
report; hostile deliveries graded fail through `sbx run` / a study; nothing left on the host.

Three sqlparse tasks (the fastest of the set: a grading takes 5-10 s); their images are built on first
use (`sbx tasks env build`, cached by content hash).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.tasks.conftest import shipped

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASKS = ("sqlparse-strip-comments-keeps-hints", "sqlparse-split-multiple-case-in-begin",
         "sqlparse-grouping-limits-raise")
SOLVED = TASKS[0]  # the scripted agent's one solved task


def _sbx(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], env=env, capture_output=True, text=True,
                          timeout=1500, check=False)
    if check:
        assert proc.returncode == 0, f"sbx {' '.join(args)}: {proc.stderr[-3000:]}"
    return proc


def _script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture(scope="module")
def task_images(docker_client) -> None:
    from orchestrator.tasks.environment import default_cache, task_image

    for name in TASKS:
        task_image(docker_client, shipped(name), default_cache())


def _leftovers(docker_client, run_ids: list[str]) -> list[str]:
    """Containers and volumes of these runs (sandboxes, copiers, graders) still on the engine."""
    names = [c.name for c in docker_client.containers.list(all=True)]
    names += [v.name for v in docker_client.volumes.list()]
    return [n for n in names if any(r in n or r[-8:] in n for r in run_ids)]


def test_sbx_run_with_the_oracle_passes_with_per_test_results(tmp_path: Path, built_images, task_images,
                                                                     docker_client) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    task = shipped(SOLVED)
    oracle = json.loads(_sbx("run", "--task", SOLVED, "--agent", "oracle", "--json", env=env).stdout)
    assert oracle["status"] == "audited" and oracle["outcome"] is True and oracle["outcome_reason"] == "passed"
    assert oracle["grading"]["repeats"] == 1 and oracle["grading"]["agree"] is True
    expected = {*task.grader.fail_to_pass, *task.grader.pass_to_pass}
    assert {t["test"] for t in oracle["test_results"]} == expected
    assert all(t["outcome"] == "passed" for t in oracle["test_results"])
    # the oracle is an agent: it ran in the sandbox and committed its change there
    assert "agent_started" in [e["kind"] for e in oracle["events"]] and oracle["commits"] == 2

    assert _leftovers(docker_client, [oracle["run_id"]]) == []


SOLVER = '''#!/usr/bin/env python3
"""A scripted coding agent that knows the fix of one task only; elsewhere it edits a docstring."""
import base64, os, pathlib, subprocess, sys
PATCHES = {__TASK__: base64.b64decode(__BLOB__).decode()}
task = os.environ["SBX_TASK"]
if task in PATCHES:
    subprocess.run(["git", "apply", "-"], input=PATCHES[task].encode(), check=True)
    print("applied my fix")
else:
    init = next(pathlib.Path(".").glob("*/__init__.py"))
    init.write_text(init.read_text() + "\\n# looked at it, found nothing\\n")
    print("no idea")
'''


def test_study_over_three_tasks_fills_pass_at_k_and_matches_a_count_by_hand(tmp_path: Path, built_images,
                                                                            task_images, docker_client) -> None:
    import base64

    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    patch = shipped(SOLVED).path("reference.patch").read_bytes()
    solver = _script(tmp_path / "solver.py", SOLVER.replace("__TASK__", repr(SOLVED))
                     .replace("__BLOB__", repr(base64.b64encode(patch).decode())))
    spec = tmp_path / "coding.yaml"
    spec.write_text(f"name: coding\ntasks: [{', '.join(TASKS)}]\nrepeats: 2\npairings:\n  - agent: oracle\n"
                    f"  - agent: noop\n  - {{agent_command: {solver}, label: partial}}\n"
                    "backend: {type: local, slots: 2}\n")
    plan = json.loads(_sbx("study", "plan", str(spec), "--json", env=env).stdout)
    assert plan["runs"] == 18 and plan["tasks"] == list(TASKS)
    assert {r["task"] for r in plan["plan"][:9]} == set(TASKS)  # interleaved: repeat 1 visits every task
    done = _sbx("study", "run", str(spec), "--report", env=env)
    assert "passed" in done.stdout

    status = json.loads(_sbx("study", "status", "coding", "--json", env=env).stdout)
    assert status["runs"] == 18 and status["tasks"] == {t: {"done": 6} for t in TASKS}

    csv = tmp_path / "runs.csv"
    _sbx("export", "coding", "--out", str(csv), env=env)
    runs = pd.read_csv(csv)
    assert len(runs) == 18 and (runs["status"] == "audited").all() and runs["outcome"].notna().all()
    # the count by hand: the oracle passes all 6, noop none, the scripted agent its one task twice
    by_hand = {p: int(runs.loc[runs["pairing"] == p, "outcome"].astype(bool).sum()) for p in ("oracle", "noop", "partial")}
    assert by_hand == {"oracle": 6, "noop": 0, "partial": 2}
    partial = runs[runs["pairing"] == "partial"]
    assert set(partial.loc[partial["outcome"].astype(bool), "task"]) == {SOLVED}
    assert set(runs.loc[~runs["outcome"].astype(bool), "outcome_reason"]) == {"tests_failed"}

    tables = tmp_path / "home" / "reports" / "coding" / "tables"
    rates = pd.read_csv(tables / "pass_rates.csv").set_index("pairing")
    for p, x in by_hand.items():
        assert (rates.loc[p, "runs"], rates.loc[p, "passes"]) == (6, x)
        assert rates.loc[p, "pass_rate"] == pytest.approx(x / 6)
    pk = pd.read_csv(tables / "pass_k.csv").set_index(["pairing", "k"])
    # per task n = 2 runs: pass@k and pass^k are exact here (oracle 1, noop 0, partial 1/3 at every k)
    for p, value in (("oracle", 1.0), ("noop", 0.0), ("partial", 1 / 3)):
        for k in (1, 2):
            assert pk.loc[(p, k), "pass_at_k"] == pytest.approx(value)
            assert pk.loc[(p, k), "pass_hat_k"] == pytest.approx(value)
    grid = pd.read_csv(tables / "task_pass_rates.csv").set_index(["task", "pairing"])
    assert grid.loc[(SOLVED, "partial"), "passes"] == 2 and grid.loc[(TASKS[1], "partial"), "passes"] == 0
    assert (tmp_path / "home" / "reports" / "coding" / "figures" / "task_pass_rates.png").is_file()

    # gradings agree: the oracle's two deliveries of each task got the same outcome for every expected test
    for task in TASKS:
        ids = runs[(runs["pairing"] == "oracle") & (runs["task"] == task)]["run_id"]
        results = [{(t["test"], t["outcome"]) for t in json.loads(_sbx("show", i, "--json", env=env).stdout)["test_results"]}
                   for i in ids]
        assert len(results) == 2 and results[0] == results[1]

    # noop fails on exactly the bug's tests, and the oracle's solution never reached its run
    task = shipped(SOLVED)
    noop_id = runs[(runs["pairing"] == "noop") & (runs["task"] == SOLVED)]["run_id"].iloc[0]
    noop = json.loads(_sbx("show", noop_id, "--json", env=env).stdout)
    assert noop["outcome"] is False and noop["outcome_reason"] == "tests_failed"
    assert {t["test"] for t in noop["test_results"] if t["outcome"] != "passed"} == set(task.grader.fail_to_pass)
    g = noop["grading"]["gradings"][0]
    assert (g["fail_to_pass_passed"], g["pass_to_pass_passed"]) == (0, len(task.grader.pass_to_pass))
    folder = tmp_path / "home" / "runs" / noop_id
    assert not any(patch.decode() in p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())

    gc = _sbx("gc", "--study", "coding", env=env).stdout
    assert gc.startswith("removed leftovers of 0 runs")
    assert _leftovers(docker_client, list(runs["run_id"])) == []


HOSTILE = {
    # a root conftest.py that turns every failure into a pass, and the hidden tests' file deleted
    "conftest": '''#!/bin/sh
cat > conftest.py <<'EOF'
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    rep.outcome = "passed"
EOF
rm -rf tests/test_format.py
''',
    # pytest.ini addopts deselecting the bug's tests, and a .pth + sitecustomize that patch pytest
    "config": '''#!/bin/sh
printf '[pytest]\\naddopts = -k "not strip_comments"\\n' > pytest.ini
echo 'import os; os.environ["PYTEST_ADDOPTS"] = "-k not strip_comments"' > sitecustomize.py
echo 'import sitecustomize' > zzz.pth
''',
    # os._exit(0) when the package is imported, and a child that outlives the test process writing a report
    "exit": '''#!/bin/sh
cat >> sqlparse/__init__.py <<'EOF'
import os as _os
if _os.fork() == 0:
    import time as _t
    _t.sleep(1)
    open("/dev/fd/3", "w").write('<testsuites><testsuite name="x" tests="1"><testcase classname="a" name="b"/></testsuite></testsuites>')
    _os._exit(0)
_os._exit(0)
EOF
''',
}


def test_hostile_deliveries_are_graded_fail_through_the_lifecycle(tmp_path: Path, built_images, task_images,
                                                                  docker_client) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    lines = [f"name: hostile\ntask: {SOLVED}\nrepeats: 1\nbackend: {{type: local, slots: 2}}\npairings:"]
    for name, text in HOSTILE.items():
        lines.append(f"  - {{agent_command: {_script(tmp_path / f'{name}.sh', text)}, label: {name}}}")
    spec = tmp_path / "hostile.yaml"
    spec.write_text("\n".join(lines) + "\n")
    _sbx("study", "run", str(spec), env=env)
    csv = tmp_path / "runs.csv"
    _sbx("export", "hostile", "--out", str(csv), env=env)
    runs = pd.read_csv(csv).set_index("pairing")
    assert len(runs) == 3 and (runs["status"] == "audited").all()
    assert not runs["outcome"].astype(bool).any()  # none of them passes
    # restored conftest/test file and config: the bug's tests run and fail; the exit: no usable report
    assert runs.loc["conftest", "outcome_reason"] == "tests_failed"
    assert runs.loc["config", "outcome_reason"] == "tests_failed"
    # the forked child's late report: killed with everything else of the grader's user when pytest ends, so
    # nothing comes after pytest's (empty) report; were it to survive, the report is untrusted
    assert runs.loc["exit", "outcome_reason"] in ("no_report", "report_held_open")
    shown = json.loads(_sbx("show", runs.loc["config", "run_id"], "--json", env=env).stdout)
    removed = shown["grading"]["tree"]["removed"]
    assert removed.get("startup_hook", 0) >= 2 and removed.get("protected", 0) >= 1  # sitecustomize, .pth; pytest.ini
    assert _leftovers(docker_client, list(runs["run_id"])) == []
