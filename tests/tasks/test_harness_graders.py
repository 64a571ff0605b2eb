"""No delivered file configures the test run, in real graders of real tasks with their pinned pytest
(issue 20, item 5): more-itertools-exactly-n-negative pins pytest 9.0.2, humanize-naturalsize-one-byte
8.3.5.

For each task, a delivery that leaves the bug in and plants every configuration form that task's pytest
reads, each loading a plugin in the package that marks every test passed:

- against the tree with the planted files left in and pytest finding its configuration itself (the
  grader's command before the harness), the hidden fail_to_pass tests pass: the attack works in that image;
- under the harness (same tree, planted files still there) they fail;
- graded for real (`grade`: the tree builder, then the harness) the delivery fails with `tests_failed`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.tasks import pytest_harness
from orchestrator.tasks.environment import default_cache, task_image
from orchestrator.tasks.grade_tree import grade, pytest_run
from orchestrator.tasks.grader_container import GraderRun, run_in_grader
from orchestrator.tasks.junit import JunitCaps
from orchestrator.tasks.verdict import decide_pytest

from .conftest import leftovers, shipped

pytestmark = pytest.mark.docker

PLUGIN = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
          "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")


def _forms(pkg: str, pkg_dir: str, site: str) -> dict[str, str]:
    """Every planted form, each loading a plugin module of its own (one module registered twice is an error):
    pytest 9's TOML files, the ini files both versions read before pyproject.toml, an entry point in a
    dist-info where the editable install puts the repo on sys.path, a .pth file."""
    dist = f"{site}/evil-1.0.dist-info" if site else "evil-1.0.dist-info"
    files = {"pytest.toml": f'[pytest]\npythonpath = ["."]\naddopts = ["-p", "{pkg}._rt1"]\n',
             ".pytest.toml": f'[pytest]\naddopts = ["-p", "{pkg}._rt2"]\n',
             "pytest.ini": f"[pytest]\naddopts = -p {pkg}._rt3\n", ".pytest.ini": f"[pytest]\naddopts = -p {pkg}._rt4\n",
             f"{dist}/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
             f"{dist}/entry_points.txt": f"[pytest11]\nevil = {pkg}._rt5\n",
             "zz.pth": f"import {pkg}._rt6\n"}
    return {**files, **{f"{pkg_dir}/_rt{i}.py": PLUGIN for i in range(1, 7)}}


TASKS = {
    # name: (package, its folder, where the editable install's sys.path entry is)
    "more-itertools-exactly-n-negative": ("more_itertools", "more_itertools", ""),
    "humanize-naturalsize-one-byte": ("humanize", "src/humanize", "src"),
}


def _outcomes(task, facts) -> dict[str, str]:
    v = decide_pytest(facts, task.grader.fail_to_pass, task.grader.pass_to_pass,
                      JunitCaps(max_bytes=task.limits.report_max_bytes))
    return {i: v.tests[i] for i in task.grader.fail_to_pass}


@pytest.mark.parametrize("name", list(TASKS))
def test_planted_configuration_in_a_real_grader(name: str, docker_client, tmp_path: Path) -> None:
    task = shipped(name)  # its trees materialised from the pinned sdists (tasks/NAME holds no tree)
    image = task_image(docker_client, task, default_cache()).tag
    pkg, pkg_dir, site = TASKS[name]
    forms = _forms(pkg, pkg_dir, site)

    # the raw tree: the original, the hidden tests, every planted form left in place
    raw = tmp_path / "raw"
    shutil.copytree(task.repo_dir, raw)
    shutil.copytree(task.hidden_dir, raw, dirs_exist_ok=True)
    for rel, text in forms.items():
        (raw / rel).parent.mkdir(parents=True, exist_ok=True)
        (raw / rel).write_text(text)

    natural = GraderRun(image=image, command=(*task.grader.command, *task.grader.paths), tree=raw,
                        limits=task.limits, timeout_s=task.timeouts.tests_s, run_label="harness-natural")
    before = _outcomes(task, run_in_grader(docker_client, natural))
    assert set(before.values()) == {"passed"}, before   # the attack works when pytest configures itself

    harness = pytest_harness.write_files(tmp_path / "harness")
    run = pytest_run(task, task.grader, image, raw, harness, task.grader.paths, "harness-raw",
                     trusted=(task.hidden_dir, task.repo_dir))
    assert run.command[3:5] == ("-c", "/workspace/pyproject.toml")   # the original's, in both repos
    after = _outcomes(task, run_in_grader(docker_client, run))
    assert set(after.values()) == {"failed"}, after

    # the real grading of that delivery (with a planted root conftest and sitecustomize besides)
    delivered = tmp_path / "delivered"
    shutil.copytree(task.repo_dir, delivered)
    for rel, text in {**forms, "conftest.py": PLUGIN, "sitecustomize.py": "import os\n"}.items():
        (delivered / rel).parent.mkdir(parents=True, exist_ok=True)
        (delivered / rel).write_text(text)
    graded = grade(docker_client, task, delivered, image, repeats=1, label="harness-hostile")
    assert not graded.passed and graded.result.reason == "tests_failed", graded.result.verdicts[0].detail
    v = graded.result.verdicts[0]
    assert all(v.tests[i] == "failed" for i in task.grader.fail_to_pass)
    assert v.counts(task.grader.pass_to_pass) == (len(task.grader.pass_to_pass),) * 2
    assert leftovers(docker_client) == []
