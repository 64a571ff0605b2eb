"""Helpers for the task tests: real pytest runs that produce real JUnit reports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

#: the Harbor example's own tests run inside its grader, never in this suite
collect_ignore_glob = ["harbor_example/*"]

SAMPLE = '''
import os
import pytest

def test_ok():
    assert 1 + 1 == 2

def test_fails():
    assert 1 + 1 == 3, "arithmetic is broken"

@pytest.mark.parametrize("s", ["1 Byte", "a::b", "x[y]", "é ü", ""])
def test_param(s):
    assert isinstance(s, str)

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_setup_error(broken):
    pass

@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown broke")

def test_teardown_error(bad_teardown):
    pass

class TestGroup:
    def test_in_class(self):
        pass

    class TestNested:
        def test_deep(self):
            pass
'''


def run_pytest(folder: Path, *args: str) -> tuple[int, bytes]:
    """Run the venv's real pytest in `folder` and return (exit status, the JUnit XML it wrote)."""
    report = folder / "report.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           f"--junitxml={report}", *args], cwd=folder, capture_output=True, timeout=120)
    return proc.returncode, report.read_bytes() if report.exists() else b""


@pytest.fixture(scope="session")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, bytes]:
    folder = tmp_path_factory.mktemp("sample")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_sample.py").write_text(SAMPLE)
    return run_pytest(folder, "tests")


# --- a small synthetic `tests` task, graded in real containers --------------------------------------------

#: tasks/calc-add-negative: a task written here, trees committed (no index is asked for anything but its wheels)
CALC_TASK = Path(__file__).resolve().parents[2] / "tasks" / "calc-add-negative"
CALC_BUG = (CALC_TASK / "repo" / "calc" / "__init__.py").read_text()
CALC_FIX = "def add(a, b):\n    return a + b\n"
PYTEST_ENV = {"iniconfig": "2.3.1", "packaging": "26.4", "pluggy": "1.7.0", "pytest": "8.3.5"}


def write_calc_task(root: Path, *, timeout_s: float = 60, repeats: int = 1) -> Path:
    """A copy of the fixture task at `root`: calc.add subtracts negative numbers; the hidden test checks
    add(2, -3) == -1."""
    import shutil

    import yaml

    shutil.copytree(CALC_TASK, root)
    task = yaml.safe_load((root / "task.yaml").read_text())
    task.update(grade_repeats=repeats, timeouts={"tests_s": timeout_s})
    (root / "task.yaml").write_text(yaml.safe_dump(task))
    return root


@pytest.fixture(scope="session")
def calc_task(tmp_path_factory: pytest.TempPathFactory, docker_client):
    """The synthetic task, loaded, with its image built (the environment image is shared and cached)."""
    from orchestrator.specs import load_tests_task
    from orchestrator.tasks.environment import default_cache, task_image

    task = load_tests_task(write_calc_task(tmp_path_factory.mktemp("calc") / "calc-add-negative", timeout_s=25))
    image = task_image(docker_client, task, default_cache())
    return task, image.tag


def shipped(name: str):
    """A shipped task (tasks/NAME), its repo and hidden tests materialised from its pinned sdists into the
    default cache (fetched once there; every test run shares them)."""
    from orchestrator.specs import load_tests_task
    from orchestrator.tasks.environment import default_cache
    from orchestrator.tasks.materialise import materialise

    return materialise(load_tests_task(name), default_cache())


def leftovers(client) -> list[str]:
    """Containers and volumes of this process (graders, Harbor copies and solutions) still present (none)."""
    from orchestrator.sandbox.container import owner_label

    label = f"sbx.owner={owner_label()}"
    names = [c.name for c in client.containers.list(all=True, filters={"label": label})]
    names += [v.name for v in client.volumes.list(filters={"label": label})]
    return names
