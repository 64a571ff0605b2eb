"""An installed sbx reads its shipped folders (orchestrator/_bundled/) and never writes into them: the standard
images' wheelhouse goes to the cache and the images build from a context assembled there, and a new task goes
to $SBX_TASKS or the working folder. From a checkout both stay where they always were.

"Installed" is simulated in-process (no checkout, the shipped folders copied into a bundled folder); the
wheel itself is built and run in tests/test_packaging.py.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orchestrator import paths
from orchestrator.failures import ImageError
from orchestrator.images import build

ROOT = Path(__file__).resolve().parents[1]


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under `folder` with its sha256: what "nothing was written there" is checked against."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """sbx as a wheel sees itself: no checkout, its images/ and tasks/ in the bundled folder (read-only, as
    a system site-packages is), a cache of its own, a user's working folder."""
    bundled = tmp_path / "site-packages" / "orchestrator" / "_bundled"
    shutil.copytree(ROOT / "images", bundled / "images", ignore=build._not_recipes)
    (bundled / "tasks").mkdir()
    monkeypatch.setattr(paths, "CHECKOUT", None)
    monkeypatch.setattr(paths, "BUNDLED", bundled)
    monkeypatch.setenv("SBX_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SBX_TASKS", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return bundled


def test_an_installed_sbx_keeps_its_wheelhouse_and_new_tasks_out_of_the_package(installed: Path, tmp_path: Path) -> None:
    assert paths.images_root() == installed / "images"
    assert paths.images_wheelhouse() == tmp_path / "cache" / "images-wheelhouse"
    assert paths.new_tasks_root() == tmp_path / "work" / "tasks"
    assert not paths.in_checkout(installed)


def test_from_a_checkout_the_wheelhouse_and_new_tasks_stay_beside_the_recipes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SBX_TASKS", raising=False)
    assert paths.CHECKOUT == ROOT
    assert paths.images_wheelhouse() == ROOT / "images" / "wheelhouse"
    assert paths.new_tasks_root() == ROOT / "tasks"
    # a checkout builds from its own images/ folder: nothing is copied
    with build.build_context(paths.images_root(), paths.images_wheelhouse()) as context:
        assert context == ROOT / "images"
    monkeypatch.setenv("SBX_TASKS", "/somewhere/else")
    assert paths.new_tasks_root() == Path("/somewhere/else")


def test_an_installed_sbx_builds_from_a_context_in_the_cache_with_the_same_tags(installed: Path, tmp_path: Path) -> None:
    recipes = installed / "images"
    wheels = paths.images_wheelhouse()
    wheels.mkdir(parents=True)
    (wheels / "demo-1.0-py3-none-any.whl").write_bytes(b"a wheel's bytes")
    before = _snapshot(recipes)
    with build.build_context(recipes, wheels) as context:
        assert context.is_relative_to(paths.cache_root())
        # the recipes as shipped, with the cache's wheels as their wheelhouse/
        held = _snapshot(context)
        assert held.pop("wheelhouse/demo-1.0-py3-none-any.whl") == hashlib.sha256(b"a wheel's bytes").hexdigest()
        assert held == before
        assert (context / "Dockerfile").is_file() and (context / "sandbox").is_dir()
        # the tags hash the recipes, not the context: an installed sbx finds the images a checkout built
        for target in build.TARGETS:
            assert build.input_hash(target, "sha256:base", context) == build.input_hash(target, "sha256:base", recipes)
    assert not context.exists()
    assert _snapshot(recipes) == before
    assert build.input_hash("sandbox", "sha256:base", recipes) == build.input_hash("sandbox", "sha256:base", ROOT / "images")


def test_an_installed_sbx_refuses_the_fleet_image_before_writing_anything(installed: Path) -> None:
    before = _snapshot(installed)
    with pytest.raises(ImageError, match="checkout"):
        build.build_images(client=None, targets=("fleet",))  # type: ignore[arg-type]  # refused before any engine call
    assert _snapshot(installed) == before


def test_sbx_tasks_new_from_an_installed_sbx_writes_into_the_working_folder(installed: Path, tmp_path: Path) -> None:
    from orchestrator.cli import main

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"x": rng.normal(size=400), "y": rng.normal(size=400)})
    table["label"] = np.where(table.x + rng.normal(size=400) > 0, "yes", "no")
    csv = tmp_path / "mine.csv"
    table.to_csv(csv, index=False)
    before = _snapshot(installed)
    code = main(["tasks", "new", "mine", "--ml", "--data", str(csv), "--target", "label", "--task-type", "binary",
                 "--positive-label", "yes"])
    assert code == 0
    assert (tmp_path / "work" / "tasks" / "mine" / "task.yaml").is_file()
    assert _snapshot(installed) == before


def test_an_installed_sbx_locks_a_copy_of_a_shipped_task_never_the_shipped_one(installed: Path, tmp_path: Path) -> None:
    from orchestrator.cli.tasks import writable_task

    shipped = installed / "tasks" / "demo"
    shutil.copytree(ROOT / "tasks" / "calc-add-negative", shipped)
    before = _snapshot(installed)
    copy = writable_task(shipped)
    assert copy == tmp_path / "work" / "tasks" / "demo"
    assert _snapshot(copy) == _snapshot(shipped)
    assert writable_task(shipped) == copy  # made once: a second lock goes on in the copy
    assert writable_task(copy) == copy
    assert _snapshot(installed) == before


def test_an_installed_sbx_relocks_agents_in_a_folder_of_its_own(installed: Path, tmp_path: Path) -> None:
    from orchestrator.cli.images import agents_lock_dir
    from orchestrator.failures import ConfigError

    before = _snapshot(installed)
    out = paths.agents_lock_root()
    assert out == tmp_path / "work" / "agents"
    assert agents_lock_dir(out) == out
    # seeded with the shipped lock, so a relock of one agent keeps the others' lines
    assert (out / "agents.lock").read_text() == (installed / "images" / "agents" / "agents.lock").read_text()
    with pytest.raises(ConfigError, match="package data"):
        agents_lock_dir(installed / "images" / "agents")
    assert _snapshot(installed) == before


def test_from_a_checkout_the_locks_are_written_beside_the_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.cli.images import agents_lock_dir
    from orchestrator.cli.tasks import writable_task

    monkeypatch.delenv("SBX_TASKS", raising=False)
    assert paths.agents_lock_root() == ROOT / "images" / "agents"
    before = _snapshot(ROOT / "images" / "agents")
    assert agents_lock_dir(paths.agents_lock_root()) == ROOT / "images" / "agents"
    assert _snapshot(ROOT / "images" / "agents") == before
    assert writable_task(ROOT / "tasks" / "calc-add-negative") == ROOT / "tasks" / "calc-add-negative"
