"""The grading tree: delivered files, protected paths restored, startup hooks removed, hidden tests over."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.specs.task import DEFAULT_PROTECTED
from orchestrator.tasks.tree import Protected, TreeCaps, TreeError, build_grading_tree, top_level_names
from tests.files import write_files


def _read(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


ORIGINAL = {
    "pkg/__init__.py": "", "pkg/core.py": "BUG = 1\n", "tests/test_core.py": "old test\n",
    "tests/conftest.py": "orig conftest\n", "pyproject.toml": "[tool.pytest.ini_options]\n", "README": "r\n",
    "pkg.egg-info/entry_points.txt": "[x]\n",
}


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path, Path]:
    original = write_files(tmp_path / "original", ORIGINAL)
    hidden = write_files(tmp_path / "hidden", {"tests/test_core.py": "new test\n", "tests/test_new.py": "added\n"})
    return original, hidden, tmp_path / "out"


def test_a_fix_is_kept_and_the_hidden_tests_win(trees, tmp_path: Path) -> None:
    original, hidden, out = trees
    delivered = write_files(tmp_path / "delivered", {**ORIGINAL, "pkg/core.py": "BUG = 0\n", "pkg/extra.py": "x\n"})
    report = build_grading_tree(delivered, original, hidden, out, DEFAULT_PROTECTED)
    got = _read(out)
    assert got["pkg/core.py"] == "BUG = 0\n" and got["pkg/extra.py"] == "x\n"
    assert got["tests/test_core.py"] == "new test\n" and got["tests/test_new.py"] == "added\n"
    assert report.hidden == ["tests/test_core.py", "tests/test_new.py"]
    assert set(report.restored) == {"tests/test_core.py", "tests/conftest.py", "pyproject.toml",
                                    "pkg.egg-info/entry_points.txt"}


def test_hostile_edits_are_undone(trees, tmp_path: Path) -> None:
    original, hidden, out = trees
    delivered = write_files(tmp_path / "delivered", {
        "pkg/__init__.py": "", "pkg/core.py": "BUG = 1\n",
        "tests/test_core.py": "def test(): pass\n",                   # edited hidden test path
        "tests/conftest.py": "mark everything passed\n",              # edited conftest
        "conftest.py": "root conftest that passes all\n",             # new root conftest
        "sub/deeper/conftest.py": "x\n",
        "pytest.ini": "[pytest]\naddopts = -k nothing\n",              # new config that deselects
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts='-x'\n",
        "sitecustomize.py": "patch pytest\n", "pkg/usercustomize.py": "x\n", "pkg/evil.pth": "import os\n",
        "evil.dist-info/entry_points.txt": "[pytest11]\nevil = pkg.core\n",
        "pkg.egg-info/entry_points.txt": "[pytest11]\nevil = pkg.core\n",
        "pkg/__pycache__/core.cpython-311.pyc": "planted", "stale.pyc": "x",
        "pytest.py": "fake runner\n", "hypothesis/__init__.py": "fake\n", "_pytest.cpython-311-x86_64-linux-gnu.so": "x",
        "nsdir/mod.py": "namespace folders cannot shadow a package\n",
        "tox.ini": "[pytest]\n",
    })
    os.symlink("/etc/passwd", delivered / "pkg" / "link.py")
    os.mkfifo(delivered / "pkg" / "fifo")
    report = build_grading_tree(delivered, original, hidden, out, DEFAULT_PROTECTED, drop_new_top_level=True)
    got = _read(out)
    assert got["tests/test_core.py"] == "new test\n"
    assert got["tests/conftest.py"] == "orig conftest\n"
    assert got["pyproject.toml"] == ORIGINAL["pyproject.toml"]
    assert got["pkg.egg-info/entry_points.txt"] == "[x]\n"
    for gone in ("conftest.py", "sub/deeper/conftest.py", "pytest.ini", "sitecustomize.py", "pkg/usercustomize.py",
                 "pkg/evil.pth", "evil.dist-info/entry_points.txt", "pkg/__pycache__/core.cpython-311.pyc",
                 "stale.pyc", "pytest.py", "hypothesis/__init__.py", "_pytest.cpython-311-x86_64-linux-gnu.so",
                 "pkg/link.py", "pkg/fifo", "tox.ini"):
        assert gone not in got, gone
    assert got["nsdir/mod.py"]
    whys = dict(report.removed)
    assert whys["pkg/link.py"] == "symlink" and whys["pkg/fifo"] == "special"
    assert whys["sitecustomize.py"] == "startup_hook" and whys["pkg/evil.pth"] == "startup_hook"
    assert whys["pytest.py"] == "new_top_level_module" and whys["hypothesis/__init__.py"] == "new_top_level_module"
    assert whys["pkg/__pycache__/"] == "bytecode" and whys["conftest.py"] == "test_config"
    assert not any(p.is_symlink() for p in out.rglob("*"))


# every file name any pytest reads configuration from, and conftest.py, at any depth: never the delivery's,
# even when the task's protected list leaves them out; dist-info / egg-info in any case (importlib lowercases)
PLANTED = {
    "pytest.toml": "[pytest]\naddopts = ['-p', 'pkg._rt']\n", ".pytest.toml": "[pytest]\n",
    "pytest.ini": "[pytest]\n", ".pytest.ini": "[pytest]\n", "pyproject.toml": "[tool.pytest]\nx = 1\n",
    "tox.ini": "[pytest]\n", "setup.cfg": "[tool:pytest]\n", "conftest.py": "x\n", "pkg/conftest.py": "x\n",
    "pkg/sub/pytest.toml": "[pytest]\n", "docs/setup.cfg": "[tool:pytest]\n",
    "Evil-1.0.DIST-INFO/entry_points.txt": "[pytest11]\nevil = pkg._rt\n", "EVIL.Egg-Info": "x\n",
    "pkg/_rt.py": "plugin module: kept (only configuration could load it)\n",
}


def test_every_configuration_form_is_the_originals(trees, tmp_path: Path) -> None:
    original, hidden, out = trees
    delivered = write_files(tmp_path / "delivered", {**ORIGINAL, **PLANTED})
    report = build_grading_tree(delivered, original, hidden, out, (), drop_new_top_level=True)
    got = _read(out)
    assert got["pyproject.toml"] == ORIGINAL["pyproject.toml"] and got["tests/conftest.py"] == "orig conftest\n"
    kept = {rel for rel in PLANTED if rel in got}
    assert kept == {"pyproject.toml", "pkg/_rt.py"}
    whys = dict(report.removed)
    assert {whys[rel] for rel in PLANTED if rel not in kept} == {"test_config", "startup_hook"}
    assert whys["Evil-1.0.DIST-INFO/entry_points.txt"] == whys["EVIL.Egg-Info"] == "startup_hook"
    # a script grader (Harbor) keeps the delivered configuration files: its own test script decides
    out2 = tmp_path / "out2"
    build_grading_tree(delivered, original, None, out2, (), test_config=False)
    assert _read(out2)["pytest.toml"] == PLANTED["pytest.toml"]


def test_deleting_hidden_paths_or_replacing_a_folder_with_a_file(trees, tmp_path: Path) -> None:
    original, hidden, out = trees
    delivered = write_files(tmp_path / "delivered", {"pkg/__init__.py": "", "pkg/core.py": "BUG = 0\n", "tests": "a file"})
    build_grading_tree(delivered, original, hidden, out, DEFAULT_PROTECTED)
    got = _read(out)
    assert got["tests/test_core.py"] == "new test\n" and got["tests/conftest.py"] == "orig conftest\n"
    assert got["pkg/core.py"] == "BUG = 0\n"


def test_a_file_where_a_hidden_folder_goes_is_replaced(tmp_path: Path) -> None:
    original = write_files(tmp_path / "o", {"a.py": ""})
    hidden = write_files(tmp_path / "h", {"deep/x/test_a.py": "t\n"})
    delivered = write_files(tmp_path / "d", {"a.py": "", "deep/x": "file in the way"})
    report = build_grading_tree(delivered, original, hidden, tmp_path / "out", ())
    assert _read(tmp_path / "out")["deep/x/test_a.py"] == "t\n"
    assert ("deep/x", "conflict") in report.removed


def test_caps(trees, tmp_path: Path) -> None:
    original, hidden, _ = trees
    delivered = write_files(tmp_path / "d", {f"f{i}.txt": "x" * 10 for i in range(20)})
    with pytest.raises(TreeError, match="more than 5 files"):
        build_grading_tree(delivered, original, hidden, tmp_path / "o1", (), caps=TreeCaps(max_files=5))
    with pytest.raises(TreeError, match="f0.txt: 10 bytes"):
        build_grading_tree(delivered, original, hidden, tmp_path / "o2", (), caps=TreeCaps(max_file_bytes=5))
    with pytest.raises(TreeError, match="pass 50 bytes"):
        build_grading_tree(delivered, original, hidden, tmp_path / "o3", (), caps=TreeCaps(max_total_bytes=50))
    (tmp_path / "o4").mkdir()
    (tmp_path / "o4" / "x").write_text("")
    with pytest.raises(FileExistsError):
        build_grading_tree(delivered, original, hidden, tmp_path / "o4", ())


@pytest.mark.parametrize(("pattern", "yes", "no"), [
    ("tests/", ["tests", "tests/a.py", "tests/x/y.py"], ["mytests/a.py", "pkg/tests/a.py", "testsuite.py"]),
    ("conftest.py", ["conftest.py", "a/b/conftest.py"], ["conftest.pyc", "xconftest.py"]),
    ("*.ini", ["pytest.ini", "a/tox.ini"], ["ini", "a.ini.bak"]),
    ("src/**/tests/", ["src/tests/a", "src/p/q/tests/b.py"], ["tests/a", "src/testsx/a"]),
    ("docs/*.py", ["docs/conf.py"], ["docs/a/conf.py"]),
])
def test_protected_patterns(pattern: str, yes: list[str], no: list[str]) -> None:
    match = Protected([pattern])
    assert all(match(p) for p in yes), [p for p in yes if not match(p)]
    assert not any(match(p) for p in no), [p for p in no if match(p)]


def test_top_level_names(tmp_path: Path) -> None:
    write_files(tmp_path, {"a.py": "", "b/__init__.py": "", "c/x.py": "", "d.txt": "", "e.cpython-311.so": ""})
    assert top_level_names(tmp_path) == {"a", "b", "e"}
