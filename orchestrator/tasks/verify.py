"""`sbx tasks verify`: the reference solution must pass, the unmodified repository must fail, and repeated
gradings of each must agree (same verdict, same outcome for every expected test)."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.specs.task import PytestGrader, TestsTaskSpec
from orchestrator.tasks.environment import task_image
from orchestrator.tasks.grade_tree import Graded, copy_tree, grade
from orchestrator.tasks.patches import apply_patch


@dataclass
class Check:
    task: str
    f2p: int
    p2p: int
    image: str = ""
    image_seconds: float = 0.0
    oracle: Graded | None = None
    noop: Graded | None = None
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def row(self) -> dict[str, Any]:
        def outcome(g: Graded | None) -> str:
            if g is None:
                return "-"
            passes = sum(v.passed for v in g.result.verdicts)
            return f"{'pass' if g.passed else 'fail'} {passes}/{len(g.result.verdicts)} ({g.result.reason})"

        return {"task": self.task, "f2p": self.f2p, "p2p": self.p2p, "oracle": outcome(self.oracle),
                "noop": outcome(self.noop),
                "agree": "yes" if all(g and g.result.agree for g in (self.oracle, self.noop)) else "NO",
                "seconds": round(self.seconds, 1), "verdict": "OK" if self.ok else "; ".join(self.problems)}


def oracle_delivery(client: Any, task: TestsTaskSpec, image: str, dest: Path) -> Path:
    """The tree the reference solution delivers: the repo with the reference patch applied (pytest tasks),
    or the workdir after solve.sh ran in a container of the task image (Harbor tasks)."""
    if task.reference_patch:
        copy_tree(task.repo_dir, dest)
        apply_patch(dest, task.path(task.reference_patch).read_text())
        return dest
    if task.solution:
        from orchestrator.tasks.harbor import run_solution

        return run_solution(client, task, image, dest)
    raise ValueError(f"{task.name}: no reference_patch and no solution to verify with")


def noop_delivery(client: Any, task: TestsTaskSpec, image: str, dest: Path) -> Path:
    """What an agent that changes nothing delivers."""
    if isinstance(task.grader, PytestGrader):
        return copy_tree(task.repo_dir, dest)
    from orchestrator.tasks.harbor import workdir_of

    return workdir_of(client, task, image, dest)


def verify_task(client: Any, task: TestsTaskSpec, cache: Path, repeats: int = 3) -> Check:
    start = time.monotonic()
    f2p = len(task.grader.fail_to_pass) if isinstance(task.grader, PytestGrader) else 0
    p2p = len(task.grader.pass_to_pass) if isinstance(task.grader, PytestGrader) else 0
    check = Check(task.name, f2p, p2p)
    built = task_image(client, task, cache)
    check.image, check.image_seconds = built.tag, built.seconds
    with tempfile.TemporaryDirectory(prefix="sbx-verify-") as tmp:
        oracle = oracle_delivery(client, task, built.tag, Path(tmp) / "oracle")
        check.oracle = grade(client, task, oracle, built.tag, repeats=repeats, label=f"verify-{task.name}-oracle")
        noop = noop_delivery(client, task, built.tag, Path(tmp) / "noop")
        check.noop = grade(client, task, noop, built.tag, repeats=repeats, label=f"verify-{task.name}-noop")
    if not check.oracle.passed:
        check.problems.append(f"oracle fails ({check.oracle.result.reason}: "
                              f"{next((v.detail for v in check.oracle.result.verdicts if not v.passed), '')[:200]})")
    if check.noop.passed or any(v.passed for v in check.noop.result.verdicts):
        check.problems.append("the unmodified repository passes")
    for label, g in (("oracle", check.oracle), ("noop", check.noop)):
        if not g.result.agree:
            check.problems.append(f"{label} gradings disagree (flaky: {list(g.result.flaky)[:3]})")
    check.seconds = time.monotonic() - start
    return check
