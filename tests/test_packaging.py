"""sbx as a package: what it declares, and what an installed wheel finds with no checkout beside it.

The slow test builds the sdist and the wheel from it offline (the locked setuptools, no build isolation, as
scripts/setup does), installs the wheel with `--no-deps` into a fresh venv outside the checkout (its
dependencies come from this venv's site-packages through a .pth file), and runs `sbx` from there.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from orchestrator import paths

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]




def _imported_distributions() -> dict[str, set[str]]:
    """distribution -> the package's modules that import it (absolute imports of non-stdlib, non-sbx
    modules anywhere in a module, lazy ones included), found through the installed distributions."""
    owners = importlib.metadata.packages_distributions()
    found: dict[str, set[str]] = {}
    host = [p for top in ("orchestrator", "compliance") for p in (ROOT / top).rglob("*.py")
            if not p.is_relative_to(ROOT / "orchestrator" / "incontainer")]
    for path in host:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in ("orchestrator", "compliance"):
                    continue
                assert top in owners, f"{path.relative_to(ROOT)} imports {top}, which no installed distribution provides"
                for dist in owners[top]:
                    found.setdefault(canonicalize_name(dist), set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_distribution_the_package_imports_is_declared() -> None:
    """A module sbx imports must be a dependency (or an extra's, for the optional backends), not something
    that happens to arrive with another package. In-container programs are not the host's imports."""
    project = _project()
    declared = {canonicalize_name(Requirement(r).name) for r in project["dependencies"]}
    optional = {canonicalize_name(Requirement(r).name)
                for extra in ("fleet", "parquet") for r in project["optional-dependencies"][extra]}
    imported = _imported_distributions()
    assert {"docker", "requests", "pandas"} <= imported.keys()
    missing = {dist: sorted(where)[:3] for dist, where in imported.items() if dist not in declared | optional}
    assert not missing, f"imported but not declared in pyproject.toml: {missing}"


def test_test_only_packages_are_not_runtime_dependencies() -> None:
    """pytest runs the suite and xgboost the built-in agents' models in tests; the host itself imports neither
    (the sandbox image has its own XGBoost, a task's grader its own pytest)."""
    runtime = {canonicalize_name(Requirement(r).name) for r in _project()["dependencies"]}
    test = {canonicalize_name(Requirement(r).name) for r in _project()["optional-dependencies"]["test"]}
    imported = _imported_distributions()
    for name in ("pytest", "xgboost-cpu"):
        assert name in test and name not in runtime and name not in imported


def test_a_checkout_reads_its_own_folders() -> None:
    assert paths.CHECKOUT == ROOT
    for name in paths.SHIPPED_FOLDERS:
        assert paths.shipped(name) == ROOT / name and (ROOT / name).is_dir()
    assert not paths.BUNDLED.exists()  # only a wheel holds the copy
    setup_py = ast.parse((ROOT / "setup.py").read_text())
    bundled = next(n.value for n in setup_py.body if isinstance(n, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id == "SHIPPED_FOLDERS" for t in n.targets))
    assert ast.literal_eval(bundled) == paths.SHIPPED_FOLDERS


def test_a_shipped_study_is_found_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.failures import ConfigError
    from orchestrator.specs.study import load_study

    monkeypatch.chdir(tmp_path)  # a name, not a path beside the cwd
    assert load_study("demo") == load_study(ROOT / "studies" / "demo.yaml")
    (tmp_path / "demo").write_text((ROOT / "studies" / "divergence.yaml").read_text())
    assert load_study("demo").name != "demo"  # a file of that name, given as a path, wins
    with pytest.raises(ConfigError, match=r"shipped: .*demo"):
        load_study("no-such-study")


def _tracked(root: Path) -> list[str]:
    """The checkout's files as git sees them: tracked, plus new ones not ignored (a task being added)."""
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, check=True, timeout=60).stdout.decode()
    return sorted(p for p in out.split("\0") if p and (root / p).is_file())


def _digests(folder: Path, rels: list[str]) -> dict[str, str]:
    return {rel: hashlib.sha256((folder / rel).read_bytes()).hexdigest() for rel in rels}


@dataclass(frozen=True)
class Installed:
    work: Path           # the cwd of every command: outside the checkout
    venv: Path
    wheel: Path
    env: dict[str, str]

    def sbx(self, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "sbx"), *argv], cwd=self.work, env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def python(self, code: str) -> str:
        proc = subprocess.run([str(self.venv / "bin" / "python"), "-c", code], cwd=self.work, env=self.env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    if not (ROOT / ".git").exists():
        pytest.fail("the packaging test copies the checkout's files as git lists them: run it from a clone")
    work = tmp_path_factory.mktemp("pkg")
    src = work / "src"
    for rel in _tracked(ROOT):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    offline = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "SBX_"))}
    offline |= {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "HOME": str(work / "home"),
                "XDG_CACHE_HOME": str(work / "xdg")}
    # the sdist first, and the wheel from the unpacked sdist (what `python -m build` does): MANIFEST.in must
    # carry the shipped folders for the wheel's hook to bundle them
    sdist_dir = work / "sdist"
    code = "import sys; from setuptools import build_meta as b; print(b.build_sdist(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(sdist_dir)], cwd=src, env=offline,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    sdist = sdist_dir / proc.stdout.split()[-1]
    with tarfile.open(sdist) as tar:
        tar.extractall(work / "unpacked", filter="data")
    unpacked = next((work / "unpacked").iterdir())
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "-w", str(work / "dist"), str(unpacked)], cwd=work, env=offline,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    wheel = next((work / "dist").glob("sbx-*.whl"))
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                           "--no-deps", "--no-index", str(wheel)], cwd=work, env=offline,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    # the dependencies: this venv's site-packages, after the new venv's own (where sbx is)
    purelib = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    deps = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    (purelib / "zz_sbx_test_deps.pth").write_text("".join(f"{d}\n" for d in deps))
    return Installed(work, venv, wheel, offline | {"SBX_HOME": str(work / "sbxhome")})


@pytest.mark.slow
def test_the_wheel_carries_the_shipped_folders_and_nothing_of_a_checkout_s_own(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    for name in paths.SHIPPED_FOLDERS:
        assert any(n.startswith(f"orchestrator/_bundled/{name}/") for n in names), name
    assert {"orchestrator/incontainer/copier.py", "orchestrator/incontainer/scorer_runner.py",
            "orchestrator/incontainer/agents/hpo.py", "orchestrator/incontainer/agents/oracle.py"} <= set(names)
    assert not [n for n in names if n.endswith((".whl", ".pyc")) or "/__pycache__/" in n or "/.rootfs/" in n]
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(installed.wheel).read(meta).decode()
    assert "License: Apache-2.0" in metadata.splitlines()
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    runtime = {canonicalize_name(Requirement(r).name) for r in requires if "extra ==" not in r}
    assert "requests" in runtime and "pytest" not in runtime and "xgboost-cpu" not in runtime


@pytest.mark.slow
def test_an_installed_sbx_finds_its_files_in_the_wheel_file_for_file(installed: Installed) -> None:
    found = json.loads(installed.python(
        "import json; from orchestrator import paths; print(json.dumps({'checkout': str(paths.CHECKOUT), "
        "'package': str(paths.BUNDLED.parent), 'cache': str(paths.cache_root()), "
        "'folders': {n: str(paths.shipped(n)) for n in paths.SHIPPED_FOLDERS}}))"))
    assert found["checkout"] == "None"
    assert Path(found["package"]).is_relative_to(installed.venv)
    assert found["cache"] == str(installed.work / "xdg" / "sbx")  # not the package's folder
    tracked = _tracked(ROOT)
    for name in paths.SHIPPED_FOLDERS:
        folder = Path(found["folders"][name])
        assert folder == Path(found["package"]) / "_bundled" / name
        want = [r.removeprefix(f"{name}/") for r in tracked if r.startswith(f"{name}/")]
        got = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)
        assert got == sorted(want), name
        assert _digests(folder, got) == _digests(ROOT / name, want), name


@pytest.mark.slow
def test_an_installed_sbx_writes_new_tasks_and_wheels_outside_its_package(installed: Installed) -> None:
    """Its shipped folders are package data: `images build`'s wheelhouse goes to the cache and `tasks new`
    into the working folder; the built-in agents it mounts are the wheel's in-container programs."""
    import pandas as pd

    found = json.loads(installed.python(
        "import json; from orchestrator import paths; from orchestrator.agents import resolve_agent; "
        "print(json.dumps({'wheelhouse': str(paths.images_wheelhouse()), 'package': str(paths.BUNDLED.parent), "
        "'hpo': str(resolve_agent('hpo').host_path)}))"))
    package = Path(found["package"])
    assert found["wheelhouse"] == str(installed.work / "xdg" / "sbx" / "images-wheelhouse")
    assert Path(found["hpo"]) == package / "incontainer" / "agents" / "hpo.py"
    csv = installed.work / "mine.csv"
    pd.DataFrame({"x": range(400), "label": ["yes", "no"] * 200}).to_csv(csv, index=False)
    proc = installed.sbx("tasks", "new", "mine", "--ml", "--data", str(csv), "--target", "label", "--task-type",
                         "binary", "--positive-label", "yes", "--json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert Path(json.loads(proc.stdout)["folder"]) == installed.work / "tasks" / "mine"
    assert (installed.work / "tasks" / "mine" / "task.yaml").is_file()
    assert not (package / "_bundled" / "tasks" / "mine").exists()


@pytest.mark.slow
def test_an_installed_sbx_lists_the_shipped_tasks_from_outside_the_checkout(installed: Installed) -> None:
    from orchestrator.specs.task import task_kind

    proc = installed.sbx("tasks", "list", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout)
    assert [row["task"] for row in rows] == sorted(p.parent.name for p in (ROOT / "tasks").glob("*/task.yaml"))
    tests = sorted(p.parent.name for p in (ROOT / "tasks").glob("*/task.yaml") if task_kind(p) == "tests")
    assert [row["task"] for row in rows if row["kind"] == "tests"] == tests and len(tests) >= 10
    assert {row["task"] for row in rows if row["kind"] == "ml"} >= {"flight-delays", "nyc-arrival-delay"}


@pytest.mark.slow
def test_an_installed_sbx_plans_a_shipped_study_and_builds_the_same_images(installed: Installed) -> None:
    proc = installed.sbx("study", "plan", "demo", "--no-connect", "--json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    plan = json.loads(proc.stdout)
    demo = yaml.safe_load((ROOT / "studies" / "demo.yaml").read_text())
    assert (plan["study"], plan["task"], plan["budget"]) == (demo["name"], demo["task"], demo["budget"])
    assert plan["runs"] == demo["repeats"] * len(demo["pairings"])
    proc = installed.sbx("images", "build", "--help")
    assert proc.returncode == 0 and "usage: sbx images build" in proc.stdout, proc.stderr[-2000:]
    # the image recipes are the checkout's, byte for byte: an installed sbx tags (and so finds) the very
    # images a checkout builds
    from orchestrator.images.build import input_hash

    code = ("from orchestrator.images.build import input_hash; "
            "print(' '.join(input_hash(t, 'sha256:base') for t in ('sandbox', 'scorer')))")
    assert installed.python(code).split() == [input_hash(t, "sha256:base") for t in ("sandbox", "scorer")]


@pytest.mark.slow
@pytest.mark.docker
def test_an_installed_sbx_runs_the_smoke_check_in_the_checkout_s_image(installed: Installed, sandbox_image: str) -> None:
    """`sbx smoke` from the wheel: it prepares the task's data into its Home and runs the starting code in
    the sandbox image the checkout built (the same tag: the recipes are the same bytes)."""
    proc = installed.sbx("data", "prepare", "--json")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    proc = installed.sbx("smoke", "--json", timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert result["ok"] and result["image"] == sandbox_image and result["whoami"] == "1000"
    assert result["interfaces"] == ["lo"] and 0.5 < result["eval_auc"] < 1.0
