"""The evaluation of a `tests` task: grade the delivered working tree with the task's hidden tests.

delivered -> scored, whatever the verdict: a fail (tests failed, collection error, timeout, crash, no
report, a refused tree...) is the run's outcome with its reason, exactly like a pass; it is never an infra
failure and never retried. Only our own failures (the engine, the task image) raise, which leaves the run
`delivered` so the grading can be redone.

The grader is orchestrator/tasks/grade_tree.py: a fresh container per grading (from create_box), the grading
tree built on the host from the delivery with every protected path restored from the original and the
hidden tests written over it, the JUnit report parsed strictly on the host. `grade_repeats` gradings are
stored one by one with every expected test's outcome (ledger/outcomes.py).
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.agents import AgentSpec
from orchestrator.agents.oracle_payload import ORACLE, oracle_for_task
from orchestrator.failures import ConfigError
from orchestrator.ledger import GradedOutcome, GradingRow, RunState
from orchestrator.log import get_logger
from orchestrator.run.context import RunContext
from orchestrator.specs.task import DockerfileEnvironment, PytestGrader, TestsTaskSpec
from orchestrator.tasks.environment import default_cache, task_image
from orchestrator.tasks.grade_tree import Graded, grade

log = get_logger(__name__)


def delivered_tree(ctx: RunContext) -> Path:
    """The working tree the run delivered (the copy-out's workspace folder): what gets graded."""
    return ctx.home.delivered_dir(ctx.run_id) / "workspace"


def graded_outcome(task: TestsTaskSpec, graded: Graded, image: str) -> GradedOutcome:
    """The ledger's form of a grading."""
    r = graded.result
    facts = graded.facts
    rows = []
    for i, v in enumerate(r.verdicts):
        f = facts[i] if i < len(facts) else None  # a refused tree ran no grading
        rows.append(GradingRow(repeat=i + 1, passed=v.passed, reason=v.reason, detail=v.detail,
                               exit_code=f.exit_code if f else None, timed_out=bool(f and f.timed_out),
                               reward=v.reward, seconds=round(f.seconds, 3) if f else 0.0, tests=dict(v.tests)))
    first_fail = next((v for v in r.verdicts if not v.passed), r.verdicts[0])
    f2p = task.grader.fail_to_pass if isinstance(task.grader, PytestGrader) else ()
    p2p = task.grader.pass_to_pass if isinstance(task.grader, PytestGrader) else ()
    return GradedOutcome(passed=r.passed, reason=r.reason, detail=first_fail.detail, agree=r.agree, flaky=dict(r.flaky),
                      tree=dict(graded.tree), image=image, seconds=graded.seconds, gradings=tuple(rows),
                      fail_to_pass=tuple(f2p), pass_to_pass=tuple(p2p))


def grading_image(ctx: RunContext, task: TestsTaskSpec) -> str:
    """The task's image (built when missing; cached by the hash of its environment and repo)."""
    return task_image(ctx.client, task, default_cache()).tag


def prepare_tests(ctx: RunContext, agent: AgentSpec) -> AgentSpec:
    """The tests-task half of `prepare`: the task image exists (built when missing, before the run starts),
    and the oracle agent carries this task's reference solution. Returns the agent as it runs."""
    task = ctx.request.task
    assert isinstance(task, TestsTaskSpec)
    if isinstance(task.environment, DockerfileEnvironment):
        raise ConfigError(f"task {task.name}: an imported Harbor task's repository is {task.environment.workdir} "
                          "of its own Dockerfile's image, which has no sandbox layer (the agent's /workspace, the "
                          "CPU-meter gate) yet; runs of Harbor tasks are not supported (`sbx tasks verify` "
                          "grades them)")
    grading_image(ctx, task)
    if agent.kind == "builtin" and agent.name == ORACLE:
        return oracle_for_task(agent, task, ctx.run_dir / "oracle")
    return agent


def grade_run(ctx: RunContext) -> GradedOutcome:
    """Grade the delivered working tree, store the outcome, and move the run to `scored`."""
    task = ctx.request.task
    assert isinstance(task, TestsTaskSpec)
    image = grading_image(ctx, task)
    tree = delivered_tree(ctx)
    if not tree.is_dir():  # the copy-out keeps the workspace folder even when it is empty
        raise FileNotFoundError(f"{tree}: the delivered working tree of run {ctx.run_id} is not in its copy-out")
    graded = grade(ctx.client, task, tree, image, label=ctx.run_id, cpuset=ctx.request.resolved_cpuset())
    outcome = graded_outcome(task, graded, image)
    ctx.ledger.outcomes.save(ctx.run_id, outcome)
    ctx.event("graded", {"passed": outcome.passed, "reason": outcome.reason, "repeats": outcome.repeats,
                         "agree": outcome.agree, "seconds": outcome.seconds})
    log.info("run.graded", run_id=ctx.run_id, task=task.name, passed=outcome.passed, reason=outcome.reason,
             repeats=outcome.repeats, agree=outcome.agree)
    ctx.ledger.advance(ctx.run_id, RunState.SCORED, reason=f"graded: {outcome.reason}")
    return outcome
