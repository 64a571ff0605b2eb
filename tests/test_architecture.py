"""The shape of the code holds: layers point one way, light packages stay light, one builder makes every
container, and failures mean what their types say."""

from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_layers_contract_holds() -> None:
    """pyproject.toml's import-linter contracts: an upward import (e.g. the ledger importing the scorer) or
    the ledger/statistics importing docker or pandas fails here."""
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe, "import-linter is a test dependency (pip install -e '.[test]')"
    proc = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def _incontainer_contract() -> dict:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = project["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c.get("forbidden_modules") == ["orchestrator.incontainer"])


def test_every_host_package_is_a_source_of_the_incontainer_contract() -> None:
    """The forbidden contract lists its sources by name: a package added later must be on the list, or it
    could import an in-container program unseen."""
    contract = _incontainer_contract()
    assert contract["type"] == "forbidden"
    top = {p.stem if p.suffix == ".py" else p.name for p in (ROOT / "orchestrator").iterdir()
           if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()}
    assert "incontainer" in top and "sandbox" in top
    assert set(contract["source_modules"]) == {f"orchestrator.{name}" for name in top - {"incontainer"}}


#: what an in-container program may import beyond the standard library: what its container's image has
_FROM_THE_IMAGE = {"run_pytest.py": {"pytest"}, "scorer_runner.py": {"numpy", "pandas"}}


@pytest.mark.parametrize("path", sorted((ROOT / "orchestrator" / "incontainer").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT / "orchestrator" / "incontainer")))
def test_in_container_programs_import_only_what_their_container_has(path: Path) -> None:
    """sbx is not installed in any container (the copier even runs `python3 -I -S`): a program there that
    imported sbx, or a library its image lacks, would fail only inside a run."""
    tree = ast.parse(path.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}:{node.lineno}: relative import"
            imported.add((node.module or "").split(".")[0])
        elif isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
    imported -= {"__future__"}
    foreign = imported - set(sys.stdlib_module_names) - _FROM_THE_IMAGE.get(path.name, set())
    assert not foreign, f"{path.name} imports {sorted(foreign)}"


def test_the_host_hands_in_container_programs_in_as_text() -> None:
    from orchestrator import paths
    from orchestrator.sandbox import copyout
    from orchestrator.scoring import container
    from orchestrator.tasks import pytest_harness

    assert copyout.COPIER_SOURCE == (paths.INCONTAINER_DIR / "copier.py").read_text()
    assert pytest_harness.LAUNCHER_SOURCE == (paths.INCONTAINER_DIR / pytest_harness.LAUNCHER).read_text()
    assert container.RUNNER_SOURCE == (paths.INCONTAINER_DIR / "scorer_runner.py").read_bytes()


@pytest.mark.parametrize(("module", "heavy"), [
    ("orchestrator.ledger", ("docker", "pandas", "scipy")),
    ("orchestrator.stats", ("docker", "pandas", "scipy", "numpy")),
    # the parser behind `sbx --help` (target < 0.3 s): no SDK, no data libraries, no asyncio, no logging setup
    ("orchestrator.cli", ("docker", "pandas", "scipy", "numpy", "asyncio", "structlog", "pydantic", "yaml")),
])
def test_light_packages_stay_light(module: str, heavy: tuple[str, ...]) -> None:
    code = (f"import sys, {module}; "
            + ("import orchestrator.cli as c; c.build_parser(); " if module == "orchestrator.cli" else "")
            + f"loaded = [m for m in {heavy!r} if m in sys.modules]; print(loaded); sys.exit(1 if loaded else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


#: `Ledger`'s public methods (issue 22: 46 before its parts): plumbing, `batch()`, studies, runs, events and
#: experiments. Every other table is a part reached through it (`ledger.scores`, see ledger/parts.py).
LEDGER_METHODS = 21


def test_the_ledger_facade_does_not_grow(tmp_path: Path) -> None:
    """A new feature adds a part to the ledger (its SQL and its `LedgerPart` in its own module, one
    `part(...)` line on `Ledger`), not methods on the facade: the count is pinned."""
    from orchestrator.ledger import Ledger, parts

    methods = sorted(n for n, v in vars(Ledger).items() if not n.startswith("_") and callable(v))
    assert len(methods) == LEDGER_METHODS, (
        f"Ledger has {len(methods)} public methods, not {LEDGER_METHODS}: {methods}. Ledger keeps the connection,"
        " batch(), studies, runs, events and experiments; a new table or feature is a part reached through it"
        " (a LedgerPart subclass beside its SQL, one `part(...)` line on Ledger: orchestrator/ledger/parts.py), so"
        " add a part (or a method to an existing part) instead of growing the facade")
    declared = sorted(n for n, v in vars(Ledger).items() if isinstance(v, parts.part))
    others = sorted(n for n in vars(Ledger) if not n.startswith("_") and n not in methods and n not in declared)
    assert not others, f"Ledger's public attributes are methods and parts only: {others}"
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        for name in declared:
            assert isinstance(getattr(ledger, name), parts.LedgerPart), f"Ledger.{name} is not a part"
            assert f"ledger.{name} " in (parts.__doc__ or ""), f"ledger/parts.py's docstring omits ledger.{name}"


def test_the_smoke_container_and_the_run_sandbox_come_from_the_same_function() -> None:
    from orchestrator.sandbox import docker as sandbox_docker
    from orchestrator.sandbox import smoke
    from orchestrator.sandbox.container import create_box

    assert "DockerSandbox" in inspect.getsource(smoke.run_starting_code)
    assert "sandbox_container(" in inspect.getsource(sandbox_docker.DockerSandbox.create)
    assert "create_box(" in inspect.getsource(sandbox_docker.DockerSandbox.create)
    # every module that makes a container does it through create_box, never through the SDK directly
    for path in (ROOT / "orchestrator").rglob("*.py"):
        text = path.read_text()
        if "containers.create(" in text or "containers.run(" in text:
            # image builds read a file out of a finished image; harbor.py's oracle and image-copy containers
            # move into the run lifecycle with the coding-task agents (issue 13, phase 2)
            allowed = ("container.py", "build.py", "fleet.py", "environment.py", "harbor.py")
            assert path.name in allowed, f"{path} creates a container itself"
    assert create_box.__module__ == "orchestrator.sandbox.container"


def test_failure_types_carry_their_meaning() -> None:
    from orchestrator import failures as f
    from orchestrator.ledger import FailureClass

    assert f.failure_class_of(f.InfraError("x")) == "infra" and f.InfraError.retryable
    assert f.failure_class_of(f.CopyOutTimeout("x")) == "infra"
    assert f.failure_class_of(f.UnscorableArtifact("train_error")) == "unscorable"
    assert f.failure_class_of(f.ConfigError("x")) is None and not f.ConfigError.retryable
    assert f.failure_class_of(f.DataError("x")) is None
    assert f.failure_class_of(RuntimeError("a bug")) == "infra"  # never the agent's fault
    assert [c for c in FailureClass if c.retryable] == [FailureClass.INFRA]
    codes = {cls: cls.exit_code for cls in (f.ConfigError, f.DataError, f.ImageNotBuilt, f.InfraError,
                                             f.EngineUnavailable, f.LedgerBusy, f.RunNotFound, f.UnscorableArtifact)}
    assert codes == {f.ConfigError: 2, f.DataError: 2, f.ImageNotBuilt: 2, f.InfraError: 3, f.EngineUnavailable: 3,
                     f.LedgerBusy: 3, f.RunNotFound: 2, f.UnscorableArtifact: 1}


def test_every_error_type_is_raised_somewhere() -> None:
    """An error class nobody raises is dead vocabulary (the architecture issue found several)."""
    from orchestrator import failures as f

    source = "\n".join(p.read_text() for p in (ROOT / "orchestrator").rglob("*.py")
                       if p.name != "failures.py")
    bases = {"SbxError", "InfraError", "AgentError", "LedgerError", "ArtifactError", "CopyOutError",
             "LedgerUnavailable", "DataError", "ConfigError"}
    for name, cls in vars(f).items():
        if isinstance(cls, type) and issubclass(cls, f.SbxError) and name not in bases:
            assert f"raise {name}(" in source or f"{name}(" in source.replace(f"class {name}(", ""), name


def test_no_lazily_exported_stat_shares_its_modules_name() -> None:
    """A submodule named like a function it exports replaces that function on the package once imported
    (the report then called a module): the lazy exports must not collide with module names."""
    from orchestrator import stats

    modules = {p.stem for p in (ROOT / "orchestrator" / "stats").glob("*.py")}
    assert not (set(stats._EXPORTS) & modules)


@pytest.mark.parametrize("argv", [
    "data prepare", "images build", "endpoints check x", "score x", "rescore", "smoke", "report x", "show x",
    "run", "audit x", "study plan x", "study run x", "study status x", "export x", "gc",
])
def test_every_command_that_reports_takes_json(argv: str) -> None:
    from orchestrator.cli import build_parser

    assert build_parser().parse_args([*argv.split(), "--json"]).json is True


@pytest.mark.parametrize("argv", ["run", "show x", "rescore", "audit x", "study run x", "study status x",
                                  "export x", "gc", "report x", "view"])
def test_every_command_that_reads_the_ledger_takes_ledger(argv: str) -> None:
    from orchestrator.cli import build_parser

    assert str(build_parser().parse_args([*argv.split(), "--ledger", "/x.sqlite"]).ledger) == "/x.sqlite"


def test_the_statistics_name_the_same_rules_as_the_audit() -> None:
    # orchestrator.stats cannot import compliance (layers), so it keeps its own list: it must agree
    # (run/record.py's verdict columns and compliance/verdicts.py read these names too)
    from orchestrator.compliance.traces import DEFAULT_RULES, REPORTED_ONLY, RULES
    from orchestrator.stats import exclusion

    assert exclusion.ALL_RULES == tuple(r.name for r in RULES)
    assert exclusion.RULES == DEFAULT_RULES
    assert frozenset(exclusion.OPTIONAL_RULES) == REPORTED_ONLY
