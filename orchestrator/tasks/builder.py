"""Make a `tests` task from a real bug fixed between two published versions of a library on PyPI.

Given the library, versions A (buggy) and B (fixed), the fix's source files (optionally some hunks) and the
test files B changed for it, the builder:

1. fetches both sdists from PyPI (sha256 checked) and unpacks them;
2. makes the trees: the repo = A's sdist (minus `drop` globs), the hidden tests = B's version of the test
   files, and locks them by digest (materialise.py; they go to the cache, never into the bundle); writes
   `reference.patch` = the A->B diff of the fix files, `instruction.md` = the issue text;
3. pins the environment: pytest and the test dependencies at their newest release before the pin date
   (pitfall: a current pytest refuses old suites' hooks), the build backend A's pyproject names, and the
   closure pip resolves for the Python chosen; then builds the environment and task images;
4. derives the test sets by running the suite in grader containers, never by assumption: on A with B's tests
   and on A + the reference patch with B's tests; fail_to_pass = failed on A and passed with the patch,
   pass_to_pass = passed on both. Tests that fail on both are left out (sibling fixes' tests); a test the
   patch breaks rejects the task. Every declared test name must match a derived fail_to_pass id; the
   fail_to_pass ids are run alone again (they must fail on A and pass with the patch);
5. writes task.yaml (spec, source, lock) and tests.yaml (the ids). `sbx tasks verify` then checks the
   bundle end to end.
"""

from __future__ import annotations

import re
import shutil
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.failures import ConfigError
from orchestrator.specs.task import (
    DEFAULT_PROTECTED,
    Limits,
    PytestGrader,
    PythonEnvironment,
    Source,
    TaskLock,
    TestsTaskSpec,
    Timeouts,
)
from orchestrator.tasks import pypi
from orchestrator.tasks.environment import lock_environment, resolve_pins, task_image
from orchestrator.tasks.grade_tree import SuiteRun, copy_tree, run_suite
from orchestrator.tasks.materialise import lock_tree, make_tree, store_tree
from orchestrator.tasks.patches import apply_patch, diff_stat, make_patch

DEFAULT_COMMAND = ("python", "-I", "-m", "pytest", "-p", "no:cacheprovider")


class BuildRequest(BaseModel):
    """One task to build (a CLI call, or one entry of tasks/recipes.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    library: str
    before: str = Field(description="the buggy release (its sdist is the repo)")
    after: str = Field(description="the release with the fix (its tests are the hidden tests)")
    tests: tuple[str, ...] = Field(min_length=1, description="test files taken whole from `after`")
    instruction: str = Field(min_length=20, description="the issue text, as a user would report the bug")
    fix: tuple[str, ...] = Field((), description="fix files: 'path' or 'path:1,3' (1-based hunks of its diff)")
    patch: str | None = Field(None, description="a hand-made reference patch instead of `fix`")
    declared: tuple[str, ...] = Field((), description="test names read from the diff; each must match a "
                                                      "derived fail_to_pass id (equal, or contained in one)")
    python: str = "3.11"
    pytest: str | None = Field(None, description="exact version; default: newest before the pin date")
    test_deps: tuple[str, ...] = Field((), description="'name' (newest before the pin date) or 'name==version'")
    build_deps: tuple[str, ...] = ()
    pin_date: str = Field("after", description="'after'/'before' (that release's upload day) or YYYY-MM-DD")
    pytest_args: tuple[str, ...] = ()
    paths: tuple[str, ...] = ("tests",)
    exclude: tuple[str, ...] = Field((), description="test ids (or parts of ids) kept out of both lists: tests "
                                                     "that depend on the machine (timing asserts)")
    drop: tuple[str, ...] = Field(("docs/", ".github/", ".idea/"),
                                  description="globs of sdist paths left out of the repo (default: docs and CI files)")
    install: Literal["editable", "none"] = "editable"
    description: str = ""
    notes: str = ""
    limits: Limits = Limits()
    timeouts: Timeouts = Timeouts()

    @model_validator(mode="after")
    def _one_patch_source(self) -> BuildRequest:
        if bool(self.fix) == bool(self.patch):
            raise ValueError("give either fix files or a patch, not both or neither")
        return self


class Recipes(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    tasks: tuple[BuildRequest, ...]


def load_recipes(path: Path) -> list[BuildRequest]:
    """tasks/recipes.yaml: every task of the set, as the builder made it."""
    from orchestrator.specs.loading import load_yaml_model

    recipes = load_yaml_model(path, Recipes).tasks
    names = [r.name for r in recipes]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"{path}: tasks: names used twice: {dupes}")
    return list(recipes)


@dataclass
class BuildResult:
    bundle: Path
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    excluded: dict[str, list[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    patch_stat: tuple[int, int] = (0, 0)
    hidden_stat: tuple[int, int] = (0, 0)
    environment: dict[str, str] = field(default_factory=dict)


def _parse_fix(spec: str) -> tuple[str, list[int]]:
    path, _, hunks = spec.partition(":")
    try:
        return path, [int(h) for h in hunks.split(",")] if hunks else []
    except ValueError:
        raise ConfigError(f"--fix {spec!r}: hunks are 1-based numbers separated by commas") from None


def _pin_date(req: BuildRequest, a: pypi.Release, b: pypi.Release) -> datetime:
    if req.pin_date == "after":
        return b.uploaded
    if req.pin_date == "before":
        return a.uploaded
    try:
        return datetime.strptime(req.pin_date, "%Y-%m-%d").replace(tzinfo=UTC) + timedelta(days=1)
    except ValueError:
        raise ConfigError(f"--pin-date {req.pin_date!r}: 'after', 'before' or YYYY-MM-DD") from None


def _pin(requirement: str, when: datetime) -> str:
    """`name==version` for a bare name (newest before `when`) or a specifier it must satisfy."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    req = Requirement(requirement)
    if any(s.operator in ("==", "===") for s in req.specifier):
        return f"{req.name}{req.specifier}"
    chosen = pypi.latest_before(req.name, when)
    if req.specifier and not req.specifier.contains(Version(chosen)):
        return f"{req.name}{req.specifier}"   # the newest before the date is too old: let pip choose
    return f"{req.name}=={chosen}"


def build_requirements(repo: Path) -> list[str]:
    """What A's pyproject says it needs to build (setuptools + wheel when it says nothing)."""
    py = repo / "pyproject.toml"
    data = tomllib.loads(py.read_text()) if py.is_file() else {}
    system = data.get("build-system", {})
    reqs = list(system.get("requires", [])) or ["setuptools", "wheel"]
    backend = system.get("build-backend", "setuptools.build_meta")
    names = {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in reqs}
    # What the backends' get_requires_for_build_editable hooks ask for on top (no build isolation here).
    if backend.startswith("setuptools") and "wheel" not in names:
        reqs.append("wheel")
    if backend.startswith("hatchling") and "editables" not in names:
        reqs.append("editables")
    return reqs


def resolve_environment(req: BuildRequest, repo: Path, when: datetime, scratch: Path) -> PythonEnvironment:
    wanted = [f"pytest=={req.pytest}" if req.pytest else _pin("pytest", when)]
    wanted += [_pin(d, when) for d in req.test_deps]
    wanted += [_pin(d, when) for d in (*build_requirements(repo), *req.build_deps)]
    pins = resolve_pins(wanted, req.python, scratch)
    return lock_environment(PythonEnvironment(python=req.python, packages=pins), scratch)


def _overlay(tree: Path, hidden: Path) -> None:
    for path in sorted(hidden.rglob("*")):
        if path.is_file():
            target = tree / path.relative_to(hidden)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def _protected(tests: tuple[str, ...]) -> tuple[str, ...]:
    extra = []
    for rel in tests:
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else None
        if folder and folder not in DEFAULT_PROTECTED and folder not in extra:
            extra.append(folder)
    return (*DEFAULT_PROTECTED, *extra)


TEST_IDS = "tests.yaml"


def write_bundle_spec(bundle: Path, spec: TestsTaskSpec, header: str) -> None:
    """task.yaml (the spec, its lock, no test ids) and tests.yaml (the derived ids) in `bundle`."""
    assert isinstance(spec.grader, PytestGrader)
    data = spec.model_dump(mode="json", exclude={"root"}, exclude_defaults=False)
    if data.get("judge") is None:  # a task names a judge by hand, after building
        data.pop("judge", None)
    # Keep the file readable: drop defaults that say nothing task-specific.
    for key, default in (("limits", Limits().model_dump()), ("timeouts", Timeouts().model_dump())):
        if data.get(key) == default:
            data.pop(key)
    ids = {k: data["grader"].pop(k) for k in ("fail_to_pass", "pass_to_pass")}
    data["test_ids"] = TEST_IDS
    (bundle / "task.yaml").write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
    (bundle / TEST_IDS).write_text(f"# {spec.name}: derived by running the suites (task.yaml's header says how).\n"
                                   + yaml.safe_dump(ids, sort_keys=False, allow_unicode=True, width=120))


def build_task(client: Any, req: BuildRequest, out_root: Path, cache: Path, *, force: bool = False,
               say: Callable[[str], None] = print) -> BuildResult:
    """Build the bundle `out_root/<name>`; raises ConfigError when the task does not hold up."""
    t0 = time.monotonic()
    final = out_root / req.name
    if final.exists() and not force:
        raise ConfigError(f"{final} exists; pass --force to rebuild it")
    work = cache / "build" / req.name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    seconds: dict[str, float] = {}

    a_rel, b_rel = pypi.sdist_release(req.library, req.before), pypi.sdist_release(req.library, req.after)
    a_src = pypi.unpack(pypi.fetch(a_rel, cache), work / "A")
    b_src = pypi.unpack(pypi.fetch(b_rel, cache), work / "B")
    say(f"sdists: {a_rel.filename} ({a_rel.uploaded:%Y-%m-%d}), {b_rel.filename} ({b_rel.uploaded:%Y-%m-%d})")

    bundle = work / "bundle"
    bundle.mkdir()
    repo, hidden = work / "repo", work / "hidden"
    make_tree(a_src, repo, req.drop)
    for rel in req.tests:
        if not (b_src / rel).is_file():
            raise ConfigError(f"--tests {rel}: not a file in {b_rel.filename}")
    make_tree(b_src, hidden, select=req.tests)
    lock = TaskLock(repo=lock_tree(repo, "before", drop=req.drop), hidden=lock_tree(hidden, "after", select=req.tests))
    if req.patch is not None:
        patch_text = req.patch
    else:
        fixes = [_parse_fix(f) for f in req.fix]
        for rel, _ in fixes:
            if not (a_src / rel).is_file() and not (b_src / rel).is_file():
                raise ConfigError(f"--fix {rel}: in neither sdist")
        patch_text = make_patch(a_src, b_src, [r for r, _ in fixes], {r: h for r, h in fixes if h})
    if not patch_text.strip():
        raise ConfigError("the reference patch is empty: the fix files do not differ between the versions")
    (bundle / "reference.patch").write_text(patch_text)
    (bundle / "instruction.md").write_text(req.instruction.rstrip() + "\n")
    hidden_patch = make_patch(a_src, b_src, list(req.tests))

    start = time.monotonic()
    when = _pin_date(req, a_rel, b_rel)
    env = resolve_environment(req, repo, when, cache / "resolve" / req.name)
    seconds["resolve"] = round(time.monotonic() - start, 1)
    say(f"environment: Python {env.python}, {len(env.packages)} pins, pytest {env.packages.get('pytest')} "
        f"(tools as of {when:%Y-%m-%d})")

    source = Source(library=req.library, before=req.before, after=req.after, before_sdist=a_rel.filename,
                    before_sha256=a_rel.sha256, after_sdist=b_rel.filename, after_sha256=b_rel.sha256,
                    fix_files=tuple(_parse_fix(f)[0] for f in req.fix), declared_tests=req.declared,
                    excluded_tests=req.exclude, notes=req.notes)
    grader = PytestGrader(command=(*DEFAULT_COMMAND, *req.pytest_args), paths=req.paths,
                          fail_to_pass=("(derived)",))
    spec = TestsTaskSpec(name=req.name, kind="tests", description=req.description, environment=env,
                         reference_patch="reference.patch", grader=grader, protected=_protected(req.tests),
                         install=req.install, limits=req.limits, timeouts=req.timeouts, source=source,
                         lock=lock, root=bundle).with_trees(repo, hidden)

    start = time.monotonic()
    image = task_image(client, spec, cache)
    seconds["images"] = round(time.monotonic() - start, 1)
    say(f"images: {image.tag} ({'built' if image.built else 'cached'} in {image.seconds:.0f}s)")

    tree_a = copy_tree(repo, work / "tree-A")
    _overlay(tree_a, hidden)
    tree_gold = copy_tree(repo, work / "tree-gold")
    apply_patch(tree_gold, patch_text)
    _overlay(tree_gold, hidden)

    start = time.monotonic()
    run_a = run_suite(client, image.tag, tree_a, grader, spec, label=f"build-{req.name}-A")
    run_gold = run_suite(client, image.tag, tree_gold, grader, spec, label=f"build-{req.name}-gold")
    seconds["suites"] = round(time.monotonic() - start, 1)
    for label, run in (("A", run_a), ("gold", run_gold)):
        if not run.outcomes or run.problem:
            raise ConfigError(f"the suite on {label} cannot be read: {run.problem or 'no results'}")
    say(f"suites: A {_count(run_a)}, gold {_count(run_gold)} in {seconds['suites']:.0f}s")
    f2p, p2p, excluded = derive(run_a, run_gold, req.exclude)
    if run_gold.broken_modules:
        raise ConfigError(f"test modules fail to import with the reference patch: {run_gold.broken_modules}")
    if excluded["broken_by_patch"]:
        raise ConfigError(f"the reference patch breaks tests that pass on {req.before}: "
                          f"{excluded['broken_by_patch'][:5]}")
    if not f2p:
        raise ConfigError(f"no test fails on {req.before} and passes with the patch: there is no task here")
    unmatched = [d for d in req.declared if not any(d == i or d in i for i in f2p)]
    if unmatched:
        raise ConfigError(f"declared tests not among the derived fail_to_pass {f2p[:6]}: {unmatched}")

    start = time.monotonic()
    alone_a = run_suite(client, image.tag, tree_a, grader, spec, ids=tuple(f2p), label=f"build-{req.name}-A1")
    alone_gold = run_suite(client, image.tag, tree_gold, grader, spec, ids=tuple(f2p), label=f"build-{req.name}-g1")
    seconds["alone"] = round(time.monotonic() - start, 1)
    passing_alone_on_a = [i for i in f2p if alone_a.outcome(i) == "passed"]
    failing_alone_on_gold = [i for i in f2p if alone_gold.outcome(i) != "passed"]
    if passing_alone_on_a or failing_alone_on_gold:
        raise ConfigError(f"fail_to_pass run alone disagrees: passes on A {passing_alone_on_a[:3]}, "
                          f"fails with the patch {failing_alone_on_gold[:3]}")

    final_spec = spec.model_copy(update={
        "grader": grader.model_copy(update={"fail_to_pass": tuple(f2p), "pass_to_pass": tuple(p2p)})})
    TestsTaskSpec.model_validate(final_spec.model_dump())
    store_tree(repo, cache)    # the trees the lock names, in the cache under their digests
    store_tree(hidden, cache)
    header = (f"# {req.library} {req.before} -> {req.after}: built by `sbx tasks build` (docs/tasks.md).\n"
              f"# fail_to_pass and pass_to_pass were derived by running the suite in grader containers on\n"
              f"# {req.before} with {req.after}'s tests, with and without the reference patch.\n")
    write_bundle_spec(bundle, final_spec, header)
    if final.exists():
        shutil.rmtree(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(bundle), str(final))
    seconds["total"] = round(time.monotonic() - t0, 1)
    return BuildResult(final, f2p, p2p, excluded, seconds, diff_stat(patch_text),
                       diff_stat(hidden_patch) if hidden_patch else (0, 0), env.packages)


def _count(run: SuiteRun) -> str:
    c: dict[str, int] = {}
    for o in run.outcomes.values():
        c[o] = c.get(o, 0) + 1
    extra = f", {len(run.broken_modules)} module(s) not importable" if run.broken_modules else ""
    return ", ".join(f"{v} {k}" for k, v in sorted(c.items())) + extra


def derive(run_a: SuiteRun, run_gold: SuiteRun, exclude: tuple[str, ...] = ()
           ) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """fail_to_pass, pass_to_pass and what was left out (with why), from the two whole-suite runs."""
    ids = sorted(set(run_a.outcomes) | set(run_gold.outcomes))
    f2p, p2p = [], []
    excluded: dict[str, list[str]] = {"fail_both": [], "broken_by_patch": [], "skipped": [], "missing": [],
                                      "excluded": []}
    for i in ids:
        if any(part in i for part in exclude):
            excluded["excluded"].append(i)
            continue
        a, g = run_a.outcome(i), run_gold.outcome(i)
        if a == "passed" and g == "passed":
            p2p.append(i)
        elif a in ("failed", "error") and g == "passed":
            f2p.append(i)
        elif a == "passed" and g in ("failed", "error"):
            excluded["broken_by_patch"].append(i)
        elif "skipped" in (a, g):
            excluded["skipped"].append(i)
        elif "missing" in (a, g):
            excluded["missing"].append(i)
        else:
            excluded["fail_both"].append(i)
    return f2p, p2p, excluded

