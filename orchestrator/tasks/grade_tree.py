"""Grade a delivered tree: build the grading tree on the host, run the task's tests in fresh grader
containers (grade_repeats times), decide each verdict on the host, combine them.

`run_suite` is the builder's variant: the whole suite (or some ids) on a tree, every test's outcome by
node id (pytest's xunit1 report carries the file of each test)."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.log import get_logger
from orchestrator.specs.task import PytestGrader, ScriptGrader, TestsTaskSpec
from orchestrator.tasks import pytest_harness
from orchestrator.tasks.grader_container import GraderRun, run_in_grader
from orchestrator.tasks.junit import JunitCaps, ReportError, mangle, parse_junit
from orchestrator.tasks.tree import TreeError, build_grading_tree
from orchestrator.tasks.verdict import Repeated, RunFacts, Verdict, combine, decide_pytest, decide_script

log = get_logger(__name__)


@dataclass
class Graded:
    """One delivery's grading: the combined verdict, the tree report, the raw facts of each repeat."""

    result: Repeated
    tree: dict[str, Any] = field(default_factory=dict)
    facts: list[RunFacts] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.result.passed


def pytest_run(task: TestsTaskSpec, grader: PytestGrader, image: str, tree: Path, harness: Path,
               args: tuple[str, ...], label: str, cpuset: str | None = None, options: tuple[str, ...] = (),
               trusted: tuple[Path, ...] = ()) -> GraderRun:
    """A pytest grading of `tree` under the harness's configuration (pytest_harness): the configuration file
    chosen from `trusted` (the hidden tests and the original repo; none: `tree` itself, which the builder
    made) and checked to be that file in `tree`."""
    workdir = GraderRun.workdir
    major = pytest_harness.pytest_major(getattr(task.environment, "packages", None))
    config = pytest_harness.config_file(trusted or (tree,), args, major)
    if trusted:
        pytest_harness.check_config(tree, config, trusted)
    command = (*pytest_harness.argv(grader.command, config, workdir), *options, *args)
    return GraderRun(image=image, command=command, tree=tree,
                     extra_trees=((harness, pytest_harness.HARNESS_DIR),),
                     env=pytest_harness.environment(dict(grader.env)), limits=task.limits,
                     timeout_s=task.timeouts.tests_s, run_label=label, cpuset=cpuset)


def _run(task: TestsTaskSpec, image: str, tree: Path, label: str, extra: tuple[tuple[Path, str], ...] = (),
         cpuset: str | None = None, harness: Path | None = None) -> GraderRun:
    g = task.grader
    if isinstance(g, PytestGrader):
        assert harness is not None
        return pytest_run(task, g, image, tree, harness, g.paths, label, cpuset,
                          trusted=(task.hidden_dir, task.repo_dir))
    assert isinstance(g, ScriptGrader)
    workdir = task.environment.workdir  # type: ignore[union-attr]  # a script grader has a dockerfile env
    return GraderRun(image=image, command=g.command, tree=tree, workdir=workdir, extra_trees=extra,
                     env=dict(g.env), limits=task.limits, timeout_s=task.timeouts.tests_s, mode="reward",
                     reward_file=g.reward_file, run_label=label, cpuset=cpuset)


def grade(client: Any, task: TestsTaskSpec, delivered: Path, image: str, *, repeats: int | None = None,
          label: str = "adhoc", cpuset: str | None = None) -> Graded:
    """Grade `delivered` (a folder on the host) `repeats` times (default: the task's grade_repeats)."""
    start = time.monotonic()
    repeats = repeats or task.grade_repeats
    pytest_grader = isinstance(task.grader, PytestGrader)
    with tempfile.TemporaryDirectory(prefix="sbx-gradetree-") as tmp:
        tree = Path(tmp) / "tree"
        hidden = task.hidden_dir if pytest_grader else None
        try:
            report = build_grading_tree(delivered, task.repo_dir, hidden, tree, task.protected if pytest_grader else (),
                                        drop_new_top_level=pytest_grader, test_config=pytest_grader)
        except TreeError as exc:
            v = Verdict(False, "tree_refused", str(exc))
            return Graded(combine([v]), seconds=time.monotonic() - start)
        extra: tuple[tuple[Path, str], ...] = ()
        if isinstance(task.grader, ScriptGrader):
            extra = ((task.hidden_dir, task.grader.tests_to),)
        harness = pytest_harness.write_files(Path(tmp) / "harness") if pytest_grader else None
        verdicts, facts = [], []
        for i in range(repeats):
            f = run_in_grader(client, _run(task, image, tree, f"{label}-{i + 1}", extra, cpuset, harness))
            facts.append(f)
            if isinstance(task.grader, PytestGrader):
                v = decide_pytest(f, task.grader.fail_to_pass, task.grader.pass_to_pass,
                                  JunitCaps(max_bytes=task.limits.report_max_bytes))
            else:
                v = decide_script(f, task.grader.pass_threshold)
            verdicts.append(v)
            log.info("grade.verdict", task=task.name, label=label, repeat=i + 1, passed=v.passed, reason=v.reason)
        return Graded(combine(verdicts), report.summary(), facts, round(time.monotonic() - start, 2))


@dataclass
class SuiteRun:
    outcomes: dict[str, str]     # node id -> passed | failed | error | skipped
    facts: RunFacts
    problem: str = ""            # why no outcomes could be read
    #: test modules that failed to import, as pytest names them in the report ("tests.test_x")
    broken_modules: tuple[str, ...] = ()

    def outcome(self, nodeid: str) -> str:
        """A test's outcome; a test of a module that failed to import counts as an error."""
        if nodeid in self.outcomes:
            return self.outcomes[nodeid]
        module = nodeid.split("::", 1)[0].removesuffix(".py").replace("/", ".")
        return "error" if module in self.broken_modules else "missing"


def run_suite(client: Any, image: str, tree: Path, grader: PytestGrader, task: TestsTaskSpec,
              ids: tuple[str, ...] | None = None, label: str = "build") -> SuiteRun:
    """Run the suite (the grader's paths, or just `ids`) on `tree` as is and read every test's outcome, under
    the same harness configuration as a grading (the tree is trusted: an original or its reference fix)."""
    args = ids if ids is not None else grader.paths
    with tempfile.TemporaryDirectory(prefix="sbx-harness-") as tmp:
        harness = pytest_harness.write_files(Path(tmp))
        run = pytest_run(task, grader, image, tree, harness, tuple(args), label,
                         options=("-o", "junit_family=xunit1", "--continue-on-collection-errors"))
        facts = run_in_grader(client, run)
    if facts.timed_out or not facts.report:
        return SuiteRun({}, facts, f"no report (exit {facts.exit_code}, timed out {facts.timed_out}): "
                                   f"{facts.output_tail[-1500:]}")
    try:
        report = parse_junit(facts.report, JunitCaps(max_bytes=task.limits.report_max_bytes))
    except ReportError as exc:
        return SuiteRun({}, facts, str(exc))
    rank = {"error": 3, "failed": 2, "skipped": 1, "passed": 0}
    outcomes: dict[str, str] = {}
    unnamed = 0
    for case in report.cases:
        nodeid = case.nodeid() or nodeid_in_tree(case.classname, case.name, tree)
        if nodeid is None:
            unnamed += 1
            continue
        if nodeid not in outcomes or rank[case.outcome] > rank[outcomes[nodeid]]:
            outcomes[nodeid] = case.outcome
    problem = f"{unnamed} testcase(s) without a node id" if unnamed else ""
    return SuiteRun(outcomes, facts, problem, tuple(report.collection_errors))


def nodeid_in_tree(classname: str, name: str, tree: Path) -> str | None:
    """A node id from a JUnit (classname, name), finding which dotted prefix is a test file in `tree`.

    Needed when a test class is defined in one module and collected in another (Markdown imports its HTML
    block tests into the md_in_html tests): pytest then writes the defining file, not the collecting one."""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        rel = "/".join(parts[:cut]) + ".py"
        if (tree / rel).is_file():
            nodeid = "::".join([rel, *parts[cut:], name])
            return nodeid if mangle(nodeid) == (classname, name) else None
    return None


def copy_tree(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=False, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".git"))
    return dest
