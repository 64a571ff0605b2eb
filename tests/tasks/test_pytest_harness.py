"""The grader's pytest configuration (orchestrator/tasks/pytest_harness.py), run here with the venv's real
pytest on a small repo: every configuration form a delivery could plant is ignored, the original's
configuration still applies. The same forms against the tasks' pinned pytest versions, in real graders,
are in test_harness_graders.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.failures import ConfigError, InfraError
from orchestrator.tasks import pytest_harness as ph
from orchestrator.tasks.junit import parse_junit
from orchestrator.tasks.tree import build_grading_tree

# the original's setup.cfg renames test functions to check_*: its tests are collected only when it is read
ORIGINAL = {
    "calc/__init__.py": "def add(a, b):\n    return a - b if b < 0 else a + b\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": "from calc import add\n\n\ndef check_add():\n    assert add(2, 3) == 5\n\n\n"
                          "def check_add_negative():\n    assert add(2, -3) == -1\n",
    "setup.cfg": "[metadata]\nname = calc\n\n[tool:pytest]\npython_functions = check_*\n",
}
F2P = "tests/test_calc.py::check_add_negative"
# a plugin in the delivered package that makes every test pass
PLUGIN = ("import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
          "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")
LOADS = "-p calc._rt"
INI = f"[pytest]\npython_functions = check_*\naddopts = {LOADS}\n"   # keeps the original's setting, adds the plugin
TOML = '[pytest]\npythonpath = ["."]\npython_functions = ["check_*"]\naddopts = ["-p", "calc._rt"]\n'

# every form that makes the venv's pytest (9.x) load the plugin when pytest finds it by itself
FORMS: dict[str, dict[str, str]] = {
    "pytest.toml": {"pytest.toml": TOML},
    ".pytest.toml": {".pytest.toml": TOML},
    "pytest.ini": {"pytest.ini": INI},
    ".pytest.ini": {".pytest.ini": INI},
    "pyproject ini_options": {"pyproject.toml": INI.replace("[pytest]", "[tool.pytest.ini_options]")
                              .replace("= check_*", '= "check_*"').replace(f"= {LOADS}", f'= "{LOADS}"')},
    "pyproject tool.pytest": {"pyproject.toml": TOML.replace("[pytest]", "[tool.pytest]")},
    "tox.ini": {"tox.ini": INI},
    "pytest.ini in the tests folder": {"tests/pytest.ini": INI},
    "dist-info entry point": {"evil-1.0.dist-info/METADATA": "Name: evil\nVersion: 1.0\n",
                              "evil-1.0.dist-info/entry_points.txt": "[pytest11]\nevil = calc._rt\n"},
    ".pth file": {"zz.pth": "import calc._rt\n", "calc/zz.pth": "import calc._rt\n"},
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _run(tree: Path, harness: Path, config: str | None, env: dict[str, str] | None = None,
         natural: bool = False) -> str:
    """The fail_to_pass test's outcome: under the harness, or (natural) as pytest finds things by itself."""
    report = tree.parent / f"{tree.name}-report.xml"
    # no -I here: PYTHONPATH stands for the editable install, which puts the repo on sys.path in a grader
    base = ("python", "-m", "pytest", "-p", "no:cacheprovider")
    cmd = list(base if natural else ph.argv(base, config, str(tree), str(harness)))
    cmd[0] = sys.executable
    environ = {"PATH": os.environ["PATH"], "HOME": str(tree.parent), "PYTHONPATH": str(tree), **(env or {})}
    if not natural:
        environ = ph.environment(environ)
    proc = subprocess.run([*cmd, "-q", "tests", f"--junitxml={report}"], cwd=tree, env=environ,
                          capture_output=True, text=True, timeout=120)
    assert report.exists(), proc.stdout + proc.stderr
    parsed = parse_junit(report.read_bytes())
    # (a planted tests/pytest.ini moves the rootdir, and the node ids with it)
    outcome = parsed.outcome_of(F2P) or parsed.outcome_of(F2P.removeprefix("tests/"))
    return outcome or f"missing ({proc.stdout[-800:]})"


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    original = _write(tmp_path / "original", ORIGINAL)
    (original / "calc" / "_rt.py").write_text(PLUGIN)  # present in both: only configuration could load it
    return original, ph.write_files(tmp_path / "harness")


def test_the_original_configuration_applies(repo) -> None:
    original, harness = repo
    assert ph.config_file(original, ["tests"], 9) == "setup.cfg"
    assert _run(original, harness, "setup.cfg") == "failed"   # collected (check_*) and failing: the bug is there


@pytest.mark.parametrize("form", list(FORMS))
def test_a_planted_configuration_is_not_read(form: str, repo, tmp_path: Path) -> None:
    original, harness = repo
    tree = tmp_path / "tree"
    import shutil

    shutil.copytree(original, tree)
    _write(tree, FORMS[form])
    if form != ".pth file":  # (a .pth outside site-packages is not read by Python at all)
        # the attack works when pytest finds its configuration and plugins itself
        assert _run(tree, harness, None, natural=True) == "passed"
    # the harness reads the original's setup.cfg (layer 2: even with the file left in the tree)...
    assert _run(tree, harness, "setup.cfg") == "failed"
    # ... and the tree builder never lets the delivered file in (layer 1)
    built = tmp_path / "built"
    report = build_grading_tree(tree, original, None, built, ("tests/",), drop_new_top_level=True)
    for rel in FORMS[form]:
        assert not (built / rel).exists() or (built / rel).read_bytes() == (original / rel).read_bytes()
    assert report.removed
    assert ph.config_file(built, ["tests"], 9) == "setup.cfg"


def test_the_delivered_copy_of_the_chosen_file_stops_the_grading(repo, tmp_path: Path) -> None:
    """Were a delivered setup.cfg ever left in the tree, the grading stops instead of reading it."""
    original, _ = repo
    tree = _write(tmp_path / "tree", {**ORIGINAL, "setup.cfg": f"[tool:pytest]\naddopts = {LOADS}\n"})
    with pytest.raises(InfraError, match="setup.cfg"):
        ph.check_config(tree, "setup.cfg", (None, original))
    ph.check_config(original, "setup.cfg", (None, original))


def test_a_conftest_above_the_root_is_not_read(repo, tmp_path: Path) -> None:
    original, harness = repo
    import shutil

    tree = tmp_path / "above" / "ws"
    shutil.copytree(original, tree)
    (tmp_path / "above" / "conftest.py").write_text(PLUGIN)
    assert _run(tree, harness, "setup.cfg") == "failed"


def test_pytest_variables_cannot_come_from_the_task_env(repo) -> None:
    original, harness = repo
    env = {"PYTEST_ADDOPTS": LOADS, "PYTEST_PLUGINS": "calc._rt"}
    assert _run(original, harness, "setup.cfg", env=env) == "failed"
    assert ph.environment(env) == {"PYTEST_ADDOPTS": "", "PYTEST_PLUGINS": "", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_no_configuration_gets_the_empty_harness_file(tmp_path: Path) -> None:
    tree = _write(tmp_path / "t", {"tests/test_x.py": "def test_x():\n    pass\n"})
    assert ph.config_file(tree, ["tests"], 9) is None
    assert ph.argv(("python", "-I", "-m", "pytest", "-x"), None, "/workspace") == (
        "python", "-I", "/sbx-harness/run_pytest.py", "-c", "/sbx-harness/pytest.ini", "--rootdir=/workspace",
        "--confcutdir=/workspace", "-p", "no:cacheprovider", "-x")
    with pytest.raises(ConfigError):
        ph.argv(("pytest", "-x"), None, "/workspace")


# which file each pytest takes, by its findpaths rules (the pinned versions are 8.3.5, 8.4.x and 9.0.2)
CHOICES = [
    ({"pyproject.toml": "[project]\nname='x'\n", "tox.ini": "[pytest]\n"}, 9, "tox.ini"),
    ({"pyproject.toml": "[project]\nname='x'\n", "setup.cfg": "[metadata]\n"}, 9, "pyproject.toml"),
    ({"pyproject.toml": "[tool.pytest.ini_options]\n", "tox.ini": "[pytest]\n"}, 8, "pyproject.toml"),
    ({"pyproject.toml": "[tool.pytest]\nx = 1\n", "tox.ini": "[pytest]\n"}, 8, "tox.ini"),
    ({"pyproject.toml": "[tool.pytest]\nx = 1\n", "tox.ini": "[pytest]\n"}, 9, "pyproject.toml"),
    ({"pytest.toml": "", "pytest.ini": ""}, 9, "pytest.toml"),
    ({"pytest.toml": "", "pytest.ini": ""}, 8, "pytest.ini"),
    ({".pytest.ini": "", "tox.ini": "[pytest]\n"}, 8, "tox.ini"),
    ({".pytest.ini": "", "tox.ini": "[pytest]\n"}, 9, ".pytest.ini"),
    ({"tox.ini": "[tox]\n# [pytest]\nenvlist = py\n", "setup.cfg": "[tool:pytest] ; here\n"}, 9, "setup.cfg"),
    ({"tests/tox.ini": "[pytest]\n", "pytest.ini": ""}, 9, "tests/tox.ini"),
]


@pytest.mark.parametrize(("files", "major", "chosen"), CHOICES)
def test_config_choice_follows_pytest(files: dict[str, str], major: int, chosen: str, tmp_path: Path) -> None:
    tree = _write(tmp_path / "t", {**files, "tests/test_x.py": ""})
    assert ph.config_file(tree, ["tests"], major) == chosen
    if major == 9:  # the venv's pytest agrees (it is a 9)
        from _pytest.config.findpaths import locate_config

        found = locate_config(tree, [tree / "tests"])[1]
        assert found is not None and found.relative_to(tree).as_posix() == chosen


def test_pinned_majors() -> None:
    assert ph.pytest_major({"pytest": "8.3.5"}) == 8 and ph.pytest_major({"pytest": "9.0.2"}) == 9
    assert ph.pytest_major(None) == 9


def test_the_images_own_plugins_are_loaded(tmp_path: Path) -> None:
    """Autoload is off, yet the plugins installed in the interpreter's own site-packages load (here the
    venv's anyio plugin, whose `anyio_backend` fixture the test needs; in a grader e.g. hypothesis for attrs):
    the launcher names them with -p. Without the launcher the same test errors."""
    tree = _write(tmp_path / "t", {"tests/test_p.py": "def test_p(anyio_backend):\n    pass\n"})
    harness = ph.write_files(tmp_path / "harness")
    report = tmp_path / "r.xml"
    env = ph.environment({"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    for launcher, want in ((True, "passed"), (False, "error")):
        base = (sys.executable, "-I", "-m", "pytest")
        cmd = ph.argv(base, None, str(tree), str(harness)) if launcher else base
        subprocess.run([*cmd, "tests", f"--junitxml={report}"], cwd=tree, env=env, capture_output=True, timeout=120)
        assert [c.outcome for c in parse_junit(report.read_bytes()).cases] == [want], launcher
