"""Task environments are pinned by content: every shipped environment names the sha256 of each pin's file,
its wheelhouse is fetched with pip's hash checking, the image installs in hash-checking mode from files that
are still what the lock names, and `sbx tasks lock` writes the hashes where the environment is declared."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from orchestrator import paths
from orchestrator.failures import ImageError
from orchestrator.specs.task import PythonEnvironment, load_any_task, load_tests_task
from orchestrator.tasks.environment import ensure_env_wheelhouse, install_lock
from orchestrator.tasks.envlock import declared_environment, lock_task

PINS = {"pytest": "8.3.5", "pluggy": "1.7.0", "packaging": "26.4", "iniconfig": "2.3.1"}
PYTEST_835 = "c69214aa47deac29fad6c2a4f590b9c4a9fdb16a403176fe154b79c0b4d4d820"  # PyPI's, py3-none-any


def test_every_shipped_environment_hashes_every_pin() -> None:
    declared = [declared_environment(load_any_task(p.parent)) for p in sorted(paths.tasks_root().glob("*/task.yaml"))]
    envs = [d[1] for d in declared if d is not None]
    assert len(envs) >= 14  # the 13 PyPI tasks, the fixture task and the reference environment
    assert [e for e in envs if set(e.hashes) != set(e.packages)] == []


def test_digest_and_dump_without_hashes_are_what_they_were() -> None:
    env = PythonEnvironment(python="3.11", packages=PINS)
    assert env.digest() == "56a62d3ba4a0"  # the digest before hashes existed: image tags and config hashes keep
    assert "hashes" not in env.model_dump()
    hashed = PythonEnvironment(python="3.11", packages=PINS, hashes={n: ["a" * 64] for n in PINS})
    assert hashed.digest() != env.digest() and "--hash=sha256:" + "a" * 64 in hashed.lock_text()


@pytest.mark.parametrize("hashes, error", [
    ({"pytest": ["a" * 64]}, "no hash for"),
    ({**{n: ["a" * 64] for n in PINS}, "requests": ["b" * 64]}, "not pinned"),
    ({n: ["A" * 64] for n in PINS}, "sha256 hex"),
    ({n: [] for n in PINS}, "sha256 hex"),
])
def test_partial_or_malformed_hashes_are_refused(hashes: dict[str, list[str]], error: str) -> None:
    with pytest.raises(ValidationError, match=error):
        PythonEnvironment(python="3.11", packages=PINS, hashes=hashes)


def _env(tmp_path: Path, pytest_hash: str) -> PythonEnvironment:
    return PythonEnvironment(python="3.11", packages={"pytest": "8.3.5"}, hashes={"pytest": [pytest_hash]})


def test_the_wheelhouse_keeps_the_locked_bytes_and_refuses_others(tmp_path: Path) -> None:
    wheels = ensure_env_wheelhouse(_env(tmp_path, PYTEST_835), tmp_path / "good")
    (wheel,) = wheels.glob("*.whl")
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == PYTEST_835
    assert install_lock(_env(tmp_path, PYTEST_835), wheels) == f"pytest==8.3.5 --hash=sha256:{PYTEST_835}\n"

    with pytest.raises(ImageError, match="(?i)hash"):
        ensure_env_wheelhouse(_env(tmp_path, "0" * 64), tmp_path / "bad")
    assert list((tmp_path / "bad").rglob("*.whl")) == []


def test_a_changed_wheel_in_the_cache_is_refused_before_a_build(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "pytest-8.3.5-py3-none-any.whl").write_bytes(b"not the wheel PyPI serves")
    with pytest.raises(ImageError, match=f"pins sha256:{PYTEST_835}"):
        install_lock(_env(tmp_path, PYTEST_835), wheels)


def test_tasks_lock_writes_the_hashes_into_task_yaml_and_check_agrees(tmp_path: Path) -> None:
    folder = tmp_path / "calc-add-negative"
    shutil.copytree(paths.tasks_root() / "calc-add-negative", folder)
    shipped = load_tests_task(folder).environment
    assert isinstance(shipped, PythonEnvironment)
    text = (folder / "task.yaml").read_text()
    # the task as it was before `sbx tasks lock`: no hashes block
    start = text.index("  hashes:\n")
    end = text.index("\n", text.index(shipped.hashes["pytest"][0])) + 1
    (folder / "task.yaml").write_text(text[:start] + text[end:])
    stripped = load_tests_task(folder).environment
    assert isinstance(stripped, PythonEnvironment) and stripped.hashes == {}

    locked = lock_task(load_tests_task(folder))
    assert locked is not None and set(locked.changed) == set(shipped.packages)
    again = load_tests_task(folder).environment
    assert again == shipped  # the same hashes as the shipped task's, read back from the file
    assert (folder / "task.yaml").read_text().startswith(text[:text.index("environment:")])

    check = subprocess.run([sys.executable, "-m", "orchestrator", "tasks", "lock", "--check", str(folder)],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "4 pins, hashes up to date" in check.stdout
