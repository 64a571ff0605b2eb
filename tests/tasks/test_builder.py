"""The builder: how fail_to_pass / pass_to_pass are derived, what the environment pins, and the committed
task set (every bundle is its recipe locked, its trees made from the pinned sdists hold up, its
instruction names no test)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from orchestrator import paths
from orchestrator.failures import ConfigError
from orchestrator.specs.task import PytestGrader, load_tests_task, task_kind
from orchestrator.tasks.builder import BuildRequest, build_requirements, derive, load_recipes
from orchestrator.tasks.grade_tree import SuiteRun
from orchestrator.tasks.patches import apply_patch
from orchestrator.tasks.verdict import RunFacts

RECIPES = paths.REPO_ROOT / "tasks" / "recipes.yaml"


def _run(outcomes: dict[str, str], broken: tuple[str, ...] = ()) -> SuiteRun:
    return SuiteRun(outcomes, RunFacts(1), broken_modules=broken)


def test_derive_sorts_every_test_into_one_set() -> None:
    a = _run({"t.py::ok": "passed", "t.py::fixed": "failed", "t.py::err": "error", "t.py::both": "failed",
              "t.py::broken": "passed", "t.py::skip": "skipped", "t.py::only_a": "passed"})
    gold = _run({"t.py::ok": "passed", "t.py::fixed": "passed", "t.py::err": "passed", "t.py::both": "failed",
                 "t.py::broken": "failed", "t.py::skip": "skipped", "t.py::new": "passed"})
    f2p, p2p, out = derive(a, gold)
    assert f2p == ["t.py::err", "t.py::fixed"] and p2p == ["t.py::ok"]
    assert out == {"fail_both": ["t.py::both"], "broken_by_patch": ["t.py::broken"], "skipped": ["t.py::skip"],
                   "missing": ["t.py::new", "t.py::only_a"], "excluded": []}
    f2p, p2p, out = derive(a, gold, exclude=("::ok", "::err"))
    assert f2p == ["t.py::fixed"] and p2p == [] and out["excluded"] == ["t.py::err", "t.py::ok"]


def test_tests_of_a_module_that_does_not_import_on_a_count_as_failing() -> None:
    a = _run({"tests/test_x.py::old": "passed"}, broken=("tests.test_new",))
    gold = _run({"tests/test_x.py::old": "passed", "tests/test_new.py::T::t": "passed"})
    f2p, p2p, _ = derive(a, gold)
    assert f2p == ["tests/test_new.py::T::t"] and p2p == ["tests/test_x.py::old"]


def test_build_requirements_follow_the_backend(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["hatchling>=1.26", "hatch-vcs"]\n'
                                             'build-backend = "hatchling.build"\n')
    assert build_requirements(tmp_path) == ["hatchling>=1.26", "hatch-vcs", "editables"]
    (tmp_path / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=77"]\n'
                                             'build-backend = "setuptools.build_meta"\n')
    assert build_requirements(tmp_path) == ["setuptools>=77", "wheel"]
    (tmp_path / "pyproject.toml").unlink()
    assert build_requirements(tmp_path) == ["setuptools", "wheel"]


def test_a_request_needs_exactly_one_patch_source() -> None:
    base = dict(name="x", library="l", before="1", after="2", tests=("t.py",), instruction="a" * 30)
    with pytest.raises(ValueError, match="either fix files or a patch"):
        BuildRequest(**base)
    with pytest.raises(ValueError, match="either fix files or a patch"):
        BuildRequest(**base, fix=("a.py",), patch="--- a\n")
    assert BuildRequest(**base, fix=("a.py",)).drop == ("docs/", ".github/", ".idea/")


def test_recipes_errors_name_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "r.yaml"
    bad.write_text("tasks:\n- name: x\n  library: l\n  before: '1'\n  after: '2'\n  tests: [t.py]\n"
                   "  instruction: short\n  fix: [a.py]\n  fixes: [b.py]\n")
    with pytest.raises(ConfigError) as exc:
        load_recipes(bad)
    assert "tasks.0.fixes: Extra inputs are not permitted" in str(exc.value)
    assert "tasks.0.instruction: String should have at least 20 characters" in str(exc.value)


# --- the committed task set -------------------------------------------------------------------------------

def _bundles() -> list[Path]:
    root = paths.REPO_ROOT / "tasks"
    return [p.parent for p in sorted(root.glob("*/task.yaml")) if task_kind(p) == "tests"]


def test_the_task_set_has_at_least_12_tasks_from_4_libraries() -> None:
    recipes = load_recipes(RECIPES)
    built = {b.name for b in _bundles()}
    assert {r.name for r in recipes} <= built, sorted({r.name for r in recipes} - built)
    libraries = {r.library for r in recipes}
    assert len(recipes) >= 12 and len(libraries) >= 4, (len(recipes), libraries)


def _locked() -> list[Path]:
    return [b for b in _bundles() if b.name in {r.name for r in load_recipes(RECIPES)}]


#: bundle files of a task made from PyPI releases: nothing derived from the third-party source
BUNDLE_FILES = {"task.yaml", "tests.yaml", "instruction.md", "reference.patch"}


@pytest.mark.parametrize("bundle", _locked(), ids=lambda p: p.name)
def test_every_bundle_is_its_recipe_locked(bundle: Path) -> None:
    """Each shipped task holds its spec, lock, ids, instruction and patch only; the lock says how its trees
    are made from the sdists the source pins, as its recipe does."""
    assert {p.name for p in bundle.iterdir()} == BUNDLE_FILES
    task = load_tests_task(bundle)
    assert isinstance(task.grader, PytestGrader) and task.reference_patch and task.source and task.lock
    recipe = {r.name: r for r in load_recipes(RECIPES)}[task.name]
    assert (task.source.library, task.source.before, task.source.after) == (recipe.library, recipe.before,
                                                                            recipe.after)
    assert (task.lock.repo.sdist, task.lock.repo.drop, task.lock.repo.select) == ("before", recipe.drop, ())
    assert (task.lock.hidden.sdist, task.lock.hidden.select) == ("after", recipe.tests)
    assert task.grader.fail_to_pass and not set(task.grader.fail_to_pass) & set(task.grader.pass_to_pass)
    assert not task.materialised
    with pytest.raises(ConfigError, match=f"sbx tasks build {task.name}"):
        _ = task.repo_dir
    # The instruction names no test and shows no patch.
    text = task.path(task.instruction).read_text()
    for test_id in task.grader.fail_to_pass:
        name = re.split(r"::|\[", test_id)[-2 if "[" in test_id else -1]
        assert name not in text, f"the instruction names the test {name}"
    assert "@@ " not in text and "+++ " not in text


#: the sqlparse tasks: their five sdists are small (the trees of the others: `sbx tasks build` + verify)
MATERIALISED = [b for b in _locked() if b.name.startswith("sqlparse-")]


@pytest.mark.parametrize("bundle", MATERIALISED, ids=lambda p: p.name)
def test_materialised_trees_hold_up(bundle: Path, tmp_path: Path) -> None:
    """Made from the pinned sdists (PyPI, once per cache), the trees match the lock, the reference patch
    applies to the repo and touches no test, and the hidden files differ from the repo's versions."""
    from orchestrator.tasks.environment import default_cache
    from orchestrator.tasks.materialise import materialise, tree_digest

    task = materialise(load_tests_task(bundle), default_cache())
    assert task.lock and tree_digest(task.repo_dir) == (task.lock.repo.sha256, task.lock.repo.files)
    assert tree_digest(task.hidden_dir)[0] == task.lock.hidden.sha256
    assert sorted(p.relative_to(task.hidden_dir).as_posix() for p in task.hidden_dir.rglob("*") if p.is_file()) \
        == sorted(task.lock.hidden.select)
    tree = shutil.copytree(task.repo_dir, tmp_path / "repo")
    changed = apply_patch(tree, task.path(task.reference_patch).read_text())
    assert changed and not any(c.startswith("tests/") for c in changed)
    for hidden in task.hidden_dir.rglob("*"):
        if hidden.is_file():
            shipped = task.repo_dir / hidden.relative_to(task.hidden_dir)
            assert not shipped.exists() or shipped.read_bytes() != hidden.read_bytes()


@pytest.mark.docker
@pytest.mark.slow
def test_building_from_pypi_reproduces_the_committed_bundle(docker_client, tmp_path: Path) -> None:
    """A real build of one task (sdists from PyPI, suites in grader containers) derives the same test ids."""
    from orchestrator.tasks.builder import build_task
    from orchestrator.tasks.environment import default_cache

    recipe = {r.name: r for r in load_recipes(RECIPES)}["sqlparse-split-begin-transaction"]
    result = build_task(docker_client, recipe, tmp_path, default_cache(), say=lambda _: None)
    committed = load_tests_task(paths.REPO_ROOT / "tasks" / recipe.name)
    assert tuple(result.fail_to_pass) == committed.grader.fail_to_pass
    assert tuple(result.pass_to_pass) == committed.grader.pass_to_pass
    built = load_tests_task(result.bundle)
    assert built.environment == committed.environment and built.lock == committed.lock
    assert {p.name for p in result.bundle.iterdir()} == BUNDLE_FILES
    assert (result.bundle / "reference.patch").read_text() == committed.path("reference.patch").read_text()
