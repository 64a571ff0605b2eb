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

CALC_BUG = "def add(a, b):\n    if b < 0:\n        return a - b   # the bug: negative numbers are subtracted\n    return a + b\n"
CALC_FIX = "def add(a, b):\n    return a + b\n"
CALC_TESTS_OLD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
CALC_TESTS_NEW = CALC_TESTS_OLD + "\n\ndef test_add_negative():\n    assert add(2, -3) == -1\n"
PYTEST_ENV = {"iniconfig": "2.3.1", "packaging": "26.4", "pluggy": "1.7.0", "pytest": "8.3.5"}


def write_calc_task(root: Path, *, timeout_s: float = 60, repeats: int = 1) -> Path:
    """A bundle: calc.add subtracts negative numbers; the hidden test checks add(2, -3) == -1."""
    import yaml

    for rel, text in {"repo/calc/__init__.py": CALC_BUG, "repo/tests/__init__.py": "",
                      "repo/tests/test_calc.py": CALC_TESTS_OLD, "repo/setup.cfg": "[metadata]\nname = calc\n",
                      "hidden/tests/test_calc.py": CALC_TESTS_NEW,
                      "instruction.md": "calc.add(2, -3) returns 5; it should return -1.\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "reference.patch").write_text(
        "--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -1,4 +1,2 @@\n def add(a, b):\n"
        "-    if b < 0:\n-        return a - b   # the bug: negative numbers are subtracted\n     return a + b\n")
    task = {"name": "calc-add-negative", "kind": "tests", "install": "none", "reference_patch": "reference.patch",
            "environment": {"type": "python", "python": "3.11", "packages": PYTEST_ENV},
            "grader": {"type": "pytest", "fail_to_pass": ["tests/test_calc.py::test_add_negative"],
                       "pass_to_pass": ["tests/test_calc.py::test_add"]},
            "grade_repeats": repeats, "timeouts": {"tests_s": timeout_s},
            "limits": {"cpus": 1, "memory_mb": 512, "pids": 128}}
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


def leftovers(client) -> list[str]:
    """Containers and volumes of this process (graders, Harbor copies and solutions) still present (none)."""
    from orchestrator.sandbox.container import owner_label

    label = f"sbx.owner={owner_label()}"
    names = [c.name for c in client.containers.list(all=True, filters={"label": label})]
    names += [v.name for v in client.volumes.list(filters={"label": label})]
    return names
