"""Grading in real containers: a fix passes, the buggy repo fails, and hostile deliveries fail with a reason
and leave nothing behind (tests/tasks/conftest.py builds the small `calc` task)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.tasks.grade_tree import grade

from .conftest import CALC_BUG, CALC_FIX, leftovers

CALC_BUG_WITH_BOMB = CALC_BUG + (
    "import os, time\nfor _ in range(500):\n    try:\n        if os.fork() == 0:\n            time.sleep(30)\n"
    "            os._exit(0)\n    except OSError:\n        break\n")

pytestmark = pytest.mark.docker

FAKE_REPORT = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
               '<testcase classname="tests.test_calc" name="test_add"/>'
               '<testcase classname="tests.test_calc" name="test_add_negative"/></testsuite></testsuites>')


def _delivery(task, tmp_path: Path, files: dict[str, str], fixed: bool = False, remove: tuple[str, ...] = ()) -> Path:
    out = tmp_path / "delivered"
    shutil.copytree(task.repo_dir, out)
    if fixed:
        (out / "calc" / "__init__.py").write_text(CALC_FIX)
    for rel in remove:
        target = out / rel
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    return out


def test_fix_passes_and_bug_fails(calc_task, docker_client, tmp_path: Path) -> None:
    task, image = calc_task
    good = grade(docker_client, task, _delivery(task, tmp_path / "a", {}, fixed=True), image, repeats=2)
    assert good.passed and good.result.agree
    assert good.result.verdicts[0].tests == {"tests/test_calc.py::test_add_negative": "passed",
                                             "tests/test_calc.py::test_add": "passed"}
    bad = grade(docker_client, task, _delivery(task, tmp_path / "b", {}), image)
    assert not bad.passed and bad.result.reason == "tests_failed"
    assert bad.result.verdicts[0].tests["tests/test_calc.py::test_add_negative"] == "failed"
    assert bad.result.verdicts[0].tests["tests/test_calc.py::test_add"] == "passed"
    assert leftovers(docker_client) == []


CONFTEST_ALL_PASS = '''
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
'''
# A child forked at import waits for pytest to exit, then keeps writing a passing report to the report pipe.
FORGER = f"""import os, time
if os.fork() == 0:
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.05)
    for _ in range(100):
        try:
            os.write(3, {FAKE_REPORT!r}.encode())
        except OSError:
            pass
        time.sleep(0.05)
    time.sleep(3600)
"""
# pytest ends at import with exit status 0 and no report; a child writes a complete passing one half a second
# later (it names the real test ids: were it read, the delivery would pass)
LATE_FORGER = f"""import os, time
if os.fork() == 0:
    time.sleep(0.5)
    os.write(3, {FAKE_REPORT!r}.encode())
    os._exit(0)
os._exit(0)
"""
PATCH_PYTEST = "import _pytest.python as p\np.Function.runtest = lambda self: None\n"

HOSTILE = {
    "edits the hidden test": ({"tests/test_calc.py": "def test_add_negative():\n    pass\ndef test_add():\n    pass\n"},
                              (), "tests_failed"),
    "deletes the tests": ({}, ("tests",), "tests_failed"),
    "root conftest marks all passed": ({"conftest.py": CONFTEST_ALL_PASS}, (), "tests_failed"),
    "conftest in the tests folder": ({"tests/conftest.py": CONFTEST_ALL_PASS}, (), "tests_failed"),
    "pytest.ini deselects": ({"pytest.ini": "[pytest]\naddopts = -k 'not negative'\n"}, (), "tests_failed"),
    "pyproject addopts": ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-p no:junitxml'\n"}, (),
                          "tests_failed"),
    "sitecustomize patches pytest": ({"sitecustomize.py": PATCH_PYTEST, "calc/sitecustomize.py": PATCH_PYTEST},
                                     (), "tests_failed"),
    ".pth patches pytest": ({"calc/zz.pth": "import _pytest.python as p; p.Function.runtest = lambda self: None\n",
                             "sbx.pth": "import os\n"}, (), "tests_failed"),
    "shadows pytest": ({"pytest.py": "raise SystemExit(0)\n", "_pytest/__init__.py": "raise SystemExit(0)\n"}, (),
                       "tests_failed"),
    "plugin through dist-info": ({"evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = calc.evil\n",
                                  "evil-1.0.dist-info/METADATA": "Name: evil\nVersion: 1.0\n",
                                  "calc/evil.py": CONFTEST_ALL_PASS}, (), "tests_failed"),
    "planted bytecode": ({"tests/__pycache__/test_calc.cpython-311-pytest-8.3.5.pyc": "garbage"}, (), "tests_failed"),
    "report written in advance": ({"report.xml": FAKE_REPORT, "tests/report.xml": FAKE_REPORT}, (), "tests_failed"),
    "os._exit(0) at import": ({"calc/__init__.py": "import os\nos._exit(0)\n"}, (), "no_report"),
    "second report at exit": ({"calc/__init__.py": CALC_FIX.replace("return a + b", "return a - b") +
                               f"import atexit, os\natexit.register(lambda: os.write(3, {FAKE_REPORT!r}.encode()))\n"},
                              (), "malformed_report"),
    "fork that outlives the grader": ({"calc/__init__.py": FORGER + CALC_FIX.replace("return a + b", "return a - b")},
                                      (), "tests_failed"),
    "late report after os._exit(0)": ({"calc/__init__.py": LATE_FORGER}, (), ("no_report", "report_held_open")),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_deliveries_fail(case: str, calc_task, docker_client, tmp_path: Path) -> None:
    task, image = calc_task
    files, remove, reason = HOSTILE[case]
    graded = grade(docker_client, task, _delivery(task, tmp_path, files, remove=remove), image)
    assert not graded.passed
    assert graded.result.reason in (reason if isinstance(reason, tuple) else (reason,)), \
        graded.result.verdicts[0].detail
    assert leftovers(docker_client) == []


def test_hostile_extras_do_not_stop_a_real_fix(calc_task, docker_client, tmp_path: Path) -> None:
    """The tree removes what it must and keeps the fix: a fixed delivery with a planted conftest still passes."""
    task, image = calc_task
    files = {"conftest.py": CONFTEST_ALL_PASS, "sitecustomize.py": PATCH_PYTEST, "pytest.ini": "[pytest]\naddopts=-x\n"}
    graded = grade(docker_client, task, _delivery(task, tmp_path, files, fixed=True), image)
    assert graded.passed
    # conftest.py, pytest.ini and setup.cfg dropped (setup.cfg restored), the two test files replaced by the originals
    assert graded.tree["removed"] == {"protected": 2, "test_config": 3, "startup_hook": 1}
    assert graded.tree["restored"] == 3 and graded.tree["hidden"] == 1


def test_memory_and_pid_limits_are_outcomes(calc_task, docker_client, tmp_path: Path) -> None:
    task, image = calc_task
    hog = CALC_FIX + "blob = bytearray(2 << 30)\n"
    graded = grade(docker_client, task, _delivery(task, tmp_path / "m", {"calc/__init__.py": hog}), image)
    assert not graded.passed and graded.result.reason in ("oom", "crash", "no_report", "collection_error")
    assert graded.result.verdicts[0].reason == "oom" or graded.facts[0].exit_code == 137
    # A fork bomb at import runs into the pids limit; the buggy code still fails and nothing is left behind.
    bomb = CALC_BUG_WITH_BOMB
    graded = grade(docker_client, task, _delivery(task, tmp_path / "p", {"calc/__init__.py": bomb}), image)
    assert not graded.passed and graded.result.reason == "tests_failed"
    assert leftovers(docker_client) == []
