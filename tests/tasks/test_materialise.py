"""Locked trees: made from pinned sdists into the content-addressed cache, checked by digest before every
use, refused and made again when altered, an error naming both digests when the sdist no longer makes them.
The sdists here are written by the test into the cache (no index is asked)."""

from __future__ import annotations

import hashlib
import io
import tarfile
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from structlog.testing import capture_logs

from orchestrator.failures import ConfigError, DataError
from orchestrator.specs.task import SdistTree, TaskLock, load_tests_task
from orchestrator.tasks.materialise import make_tree, materialise, tree_digest, tree_path, tree_state

from .conftest import CALC_TASK

OLD = {"calc/__init__.py": "def add(a, b):\n    return a - b if b < 0 else a + b\n",
       "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
       "docs/index.md": "# calc\n", "run.sh": "#!/bin/sh\n"}
NEW = {**OLD, "calc/__init__.py": "def add(a, b):\n    return a + b\n",
       "tests/test_calc.py": OLD["tests/test_calc.py"] + "\n\ndef test_neg():\n    assert add(2, -3) == -1\n"}


def _sdist(cache: Path, name: str, files: dict[str, str]) -> tuple[str, str]:
    """A .tar.gz sdist (top folder `name/`, run.sh executable) in cache/sdists/; (file name, sha256)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{rel}")
            info.size, info.mode = len(data), 0o755 if rel.endswith(".sh") else 0o644
            tar.addfile(info, io.BytesIO(data))
    (cache / "sdists").mkdir(parents=True, exist_ok=True)
    (cache / "sdists" / f"{name}.tar.gz").write_bytes(buf.getvalue())
    return f"{name}.tar.gz", hashlib.sha256(buf.getvalue()).hexdigest()


def _digest_of(cache: Path, name: str, drop: tuple[str, ...] = (), select: tuple[str, ...] = ()) -> tuple[str, int]:
    from orchestrator.tasks import pypi

    scratch = Path(tempfile.mkdtemp(dir=cache))
    src = pypi.unpack(cache / "sdists" / f"{name}.tar.gz", scratch / name)
    make_tree(src, scratch / "tree", drop, select)
    return tree_digest(scratch / "tree")


def _locked_task(tmp_path: Path, *, repo_sha: str | None = None) -> tuple[Path, Path]:
    """A task bundle (the fixture's instruction and patch) locked to two sdists in the cache."""
    cache = tmp_path / "cache"
    a_file, a_sha = _sdist(cache, "calc-1.0", OLD)
    b_file, b_sha = _sdist(cache, "calc-1.1", NEW)
    repo_digest, repo_files = _digest_of(cache, "calc-1.0", drop=("docs/",))
    hidden_digest, _ = _digest_of(cache, "calc-1.1", select=("tests/test_calc.py",))
    bundle = tmp_path / "tasks" / "calc-locked"
    bundle.mkdir(parents=True)
    for name in ("instruction.md", "reference.patch"):
        (bundle / name).write_bytes((CALC_TASK / name).read_bytes())
    spec = yaml.safe_load((CALC_TASK / "task.yaml").read_text())
    ids = spec["grader"]
    spec.update(name="calc-locked", test_ids="tests.yaml",
                grader={"type": "pytest"},
                source={"library": "calc", "before": "1.0", "after": "1.1", "before_sdist": a_file,
                        "before_sha256": a_sha, "after_sdist": b_file, "after_sha256": b_sha},
                lock={"repo": {"sdist": "before", "drop": ["docs/"], "sha256": repo_sha or repo_digest,
                               "files": repo_files},
                      "hidden": {"sdist": "after", "select": ["tests/test_calc.py"], "sha256": hidden_digest,
                                 "files": 1}})
    (bundle / "task.yaml").write_text(yaml.safe_dump(spec))
    (bundle / "tests.yaml").write_text(yaml.safe_dump({"fail_to_pass": ids["fail_to_pass"],
                                                      "pass_to_pass": ids["pass_to_pass"]}))
    return bundle, cache


def test_a_locked_task_is_materialised_into_the_cache_by_digest(tmp_path: Path) -> None:
    bundle, cache = _locked_task(tmp_path)
    task = load_tests_task(bundle)
    assert task.lock and task.grader.fail_to_pass == ("tests/test_calc.py::test_add_negative",)  # from tests.yaml
    with pytest.raises(ConfigError, match="sbx tasks build calc-locked"):
        _ = task.hidden_dir
    assert tree_state(cache, task.lock.repo) == "missing"
    ready = materialise(task, cache)
    assert ready.repo_dir == tree_path(cache, task.lock.repo.sha256)
    assert sorted(p.relative_to(ready.repo_dir).as_posix() for p in ready.repo_dir.rglob("*") if p.is_file()) \
        == ["calc/__init__.py", "run.sh", "tests/test_calc.py"]          # docs/ dropped
    assert (ready.repo_dir / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (ready.hidden_dir / "tests" / "test_calc.py").read_text() == NEW["tests/test_calc.py"]
    assert tree_state(cache, task.lock.repo) == tree_state(cache, task.lock.hidden) == "cached"
    # the spec's dump (what a run's config hash holds) is the same before and after: the paths are not in it
    assert ready.model_dump(mode="json") == task.model_dump(mode="json")
    # made once: a second materialise finds the trees (the sdists may be gone)
    for sdist in (cache / "sdists").iterdir():
        sdist.unlink()
    assert materialise(task, cache).repo_dir == ready.repo_dir


@pytest.mark.parametrize("tamper", ["edit", "add", "bytecode"])
def test_an_altered_cache_tree_is_refused_and_made_again(tmp_path: Path, tamper: str) -> None:
    bundle, cache = _locked_task(tmp_path)
    task = load_tests_task(bundle)
    repo = materialise(task, cache).repo_dir
    if tamper == "edit":
        (repo / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    elif tamper == "add":
        (repo / "conftest.py").write_text("")
    else:
        (repo / "calc" / "__pycache__").mkdir()
    found, _ = tree_digest(repo)
    assert tree_state(cache, task.lock.repo) == "tampered"
    with capture_logs() as logs:
        again = materialise(task, cache)
    text = next(e["message"] for e in logs if e["event"] == "tasks.tree_refused")
    assert f"sha256:{found}" in text and f"sha256:{task.lock.repo.sha256}" in text
    assert tree_digest(again.repo_dir)[0] == task.lock.repo.sha256
    assert (again.repo_dir / "calc" / "__init__.py").read_text() == OLD["calc/__init__.py"]


def test_an_sdist_that_no_longer_makes_the_locked_tree_is_an_error_naming_both(tmp_path: Path) -> None:
    bundle, cache = _locked_task(tmp_path, repo_sha="0" * 64)
    with pytest.raises(DataError) as exc:
        materialise(load_tests_task(bundle), cache)
    made, _ = _digest_of(cache, "calc-1.0", drop=("docs/",))
    assert f"sha256:{made}" in str(exc.value) and f"sha256:{'0' * 64}" in str(exc.value)
    assert not tree_path(cache, "0" * 64).exists()


def test_an_sdist_with_other_bytes_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cached file does not match the pin, and the index (asked for that one version) offers other bytes."""
    from orchestrator.tasks import pypi

    bundle, cache = _locked_task(tmp_path)
    task = load_tests_task(bundle)
    (cache / "sdists" / "calc-1.0.tar.gz").write_bytes(b"not the sdist")
    served = pypi.Release("calc", "1.0", "calc-1.0.tar.gz", "https://example.invalid/x", "f" * 64,
                          datetime(2025, 1, 1, tzinfo=UTC))
    monkeypatch.setattr(pypi, "sdist_release", lambda name, version, index=pypi.INDEX: served)
    with pytest.raises(DataError, match=f"serves calc-1.0.tar.gz sha256:{'f' * 64}, the task pins "
                                        f"calc-1.0.tar.gz sha256:{task.source.before_sha256}"):
        materialise(task, cache)


def test_ids_in_both_files_are_refused(tmp_path: Path) -> None:
    bundle, _ = _locked_task(tmp_path)
    spec = yaml.safe_load((bundle / "task.yaml").read_text())
    spec["grader"]["fail_to_pass"] = ["x"]
    (bundle / "task.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ConfigError, match="fail_to_pass is in tests.yaml"):
        load_tests_task(bundle)


def test_a_lock_needs_a_source() -> None:
    tree = SdistTree(sdist="before", sha256="a" * 64, files=1)
    spec = yaml.safe_load((CALC_TASK / "task.yaml").read_text())
    with pytest.raises(ValueError, match="the task has no source"):
        from orchestrator.specs.task import TestsTaskSpec

        TestsTaskSpec.model_validate({**spec, "lock": TaskLock(repo=tree, hidden=tree).model_dump()})


def test_the_fixture_task_has_its_trees_in_its_bundle() -> None:
    task = load_tests_task(CALC_TASK)
    assert task.lock is None and task.materialised and materialise(task) is task
    assert (task.repo_dir / "calc" / "__init__.py").is_file() and (task.hidden_dir / "tests" / "test_calc.py").is_file()


def test_sbx_tasks_build_and_list_show_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from orchestrator.cli import main

    bundle, cache = _locked_task(tmp_path)
    monkeypatch.setenv("SBX_TASKS", str(bundle.parent))
    monkeypatch.setenv("SBX_CACHE", str(cache))

    def listed() -> str:
        capsys.readouterr()
        assert main(["tasks", "list", "--json"]) == 0
        (row,) = json.loads(capsys.readouterr().out)
        return row["trees"]

    assert listed() == "missing"
    assert main(["tasks", "build", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    task = load_tests_task(bundle)
    assert row["was"] == "missing" and row["repo"] == str(tree_path(cache, task.lock.repo.sha256))
    assert listed() == "cached"
    (Path(row["hidden"]) / "tests" / "test_calc.py").write_text("def test_add_negative():\n    pass\n")
    assert listed() == "tampered"
    assert main(["tasks", "build", "calc-locked"]) == 0
    assert listed() == "cached"


def test_no_task_yaml_can_point_its_trees_anywhere(tmp_path: Path) -> None:
    bundle, _ = _locked_task(tmp_path)
    spec = yaml.safe_load((bundle / "task.yaml").read_text())
    (bundle / "task.yaml").write_text(yaml.safe_dump({**spec, "_repo_path": "/etc"}))
    with pytest.raises(ConfigError, match="_repo_path: Extra inputs are not permitted"):
        load_tests_task(bundle)
