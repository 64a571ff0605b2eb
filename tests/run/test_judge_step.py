"""The lifecycle's judge step (run/judge.py) on the host, through the host's real gateway to the stand-in
(whose log is the ground truth): the verdict, tokens and cost of each call are the judge's own ledger row,
never the agent's; the prompt holds the instruction and the delivered diff, never the hidden tests; whatever
goes wrong with the judge is its outcome and leaves the run as its evaluation left it.

No sandbox runs here: the run is brought to `scored` in the ledger with a delivered working tree on disk, as
the copy-out leaves it (the whole lifecycle with Docker: tests/tasks/test_judged_run.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.agents import resolve_agent
from orchestrator.gateway.transcript import read_transcript
from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunState
from orchestrator.model import Scenario
from orchestrator.run.context import RunContext
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.run.judge import judge_delivered, needs_judge, tree_diff
from orchestrator.run.record import run_row
from orchestrator.run.request import RunRequest
from orchestrator.specs import load_budget
from orchestrator.specs.judge import JudgeSpec
from orchestrator.specs.task import load_tests_task
from tests.ledger.ledger_helpers import drive, plan
from tests.run.standin_setup import (
    KEY_ENV,
    MODEL,
    REAL_KEY,
    expected_cost,
    standin_gateway,
    truth,
    write_model_files,
)

TASK = Path(__file__).resolve().parents[2] / "tasks" / "calc-add-negative"
PROMPT = "Issue:\n{instruction}\n\nPatch:\n{diff}\n\nEnd with one line: VERDICT: PASS or VERDICT: FAIL."
SPEC = JudgeSpec(name="standin-judge", endpoint="standin-anthropic", model=MODEL, prompt=PROMPT, limit_usd=0.05)
VERDICTS = Scenario.model_validate({"name": "judge", "steps": [
    {"finish": "The patch handles it.\nVERDICT: PASS", "variants": [{"p": 0.4, "finish": "It misses a case.\nVERDICT: FAIL"}]}]})


def _scored_run(home: Home, ledger: Ledger, seed: int, judge: JudgeSpec | None = SPEC) -> RunContext:
    """A calc-add-negative run brought to `scored`, its delivery the reference fix (and a stray binary file)."""
    task = load_tests_task(TASK)
    run_id = plan(ledger, task=task.name, agent="oracle")
    drive(ledger, run_id, RunState.SCORED)
    workspace = home.delivered_dir(run_id) / "workspace"
    shutil.copytree(task.repo_dir, workspace)
    init = workspace / "calc" / "__init__.py"
    init.write_text(init.read_text().replace("    if b < 0:\n        return a - b   # the bug: negative numbers "
                                             "are subtracted\n", ""))
    (workspace / "blob.bin").write_bytes(b"\xff\xfe\x00")
    req = RunRequest(task=task, budget=load_budget("smoke"), agent=resolve_agent("oracle"), data_dir=home.root,
                     seed=seed, judge=judge)
    return RunContext(home, ledger, None, req, run_id)  # type: ignore[arg-type]  # the judge uses no engine


def test_judge_step_verdicts_are_the_standins_and_their_own_rows(tmp_path: Path, home: Home) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite", create=True)
    with standin_gateway(tmp_path / "model", VERDICTS) as setup:
        rows = []
        for seed in range(8):
            ctx = _scored_run(home, ledger, seed)
            assert needs_judge(ctx)
            row = judge_delivered(ctx, setup.host)
            assert not needs_judge(ctx)                           # done once: a resumed run is not judged again
            calls = setup.calls(f"{ctx.run_id}.judge.{SPEC.name}")
            assert len(calls) == 1 and calls[0]["seed"] == seed
            assert row.verdict == ("pass" if calls[0]["variant"] == -1 else "fail") and row.outcome == "ok"
            assert (row.input_tokens, row.output_tokens) == (truth(calls)["input"], truth(calls)["output"])
            assert row.cost_usd == pytest.approx(expected_cost(calls)) and row.cost_usd > 0
            assert row.spec_sha256 == SPEC.digest() and row.transcript_sha256 is not None
            assert ledger.get_run(ctx.run_id).status == RunState.SCORED    # the run is as its grading left it
            assert ledger.usage.of_run(ctx.run_id) is None                   # the agent's usage is not the judge's
            view = run_row(ledger, ctx.run_id)
            assert view["judge_outcome"] is (row.verdict == "pass") and view["judge_cost_usd"] == row.cost_usd
            (judged,) = ledger.events(ctx.run_id, "judged")
            assert judged.detail["verdict"] == row.verdict and "error" not in judged.detail
            rows.append(row)
        assert {r.verdict for r in rows} == {"pass", "fail"}                # both of the stand-in's answers met
        (call,) = read_transcript(ctx.run_dir / f"judge-{SPEC.name}.jsonl.gz")
        body = call["request"]["body"]
        assert "calc.add(2, -3) returns 5" in body                          # the instruction
        assert "-    if b < 0:" in body and "Binary files a/blob.bin and b/blob.bin differ" in body  # the diff
        assert "test_add_negative" not in body                              # never the hidden tests
    ledger.close()


def test_a_judge_failure_is_its_outcome_never_the_runs(tmp_path: Path, home: Home) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite", create=True)
    ctx = _scored_run(home, ledger, 0)                                    # no gateway at all
    row = judge_delivered(ctx, None)
    assert (row.verdict, row.outcome, row.cost_usd) == (None, "error", None)
    assert "no model gateway" in ledger.events(ctx.run_id, "judged")[0].detail["error"]
    assert ledger.get_run(ctx.run_id).status == RunState.SCORED and run_row(ledger, ctx.run_id)["judge_outcome"] is None
    unreadable = Scenario.model_validate({"name": "j", "steps": [{"finish": "Looks fine to me, I think."}]})
    with standin_gateway(tmp_path / "model", unreadable) as setup:
        ctx = _scored_run(home, ledger, 1)
        row = judge_delivered(ctx, setup.host)                            # an answer the rule cannot read
        assert (row.verdict, row.outcome) == (None, "ok") and row.cost_usd == pytest.approx(
            expected_cost(setup.calls(f"{ctx.run_id}.judge.{SPEC.name}")))
        ctx = _scored_run(home, ledger, 2, SPEC.model_copy(update={"endpoint": "nowhere"}))
        row = judge_delivered(ctx, setup.host)                            # an endpoint the gateway does not know
        assert (row.verdict, row.outcome) == (None, "error")
    # an endpoint that is down: nothing listens where the endpoints file points
    endpoints, cards = write_model_files(tmp_path / "down", "http://127.0.0.1:9")
    with GatewayHost.from_files(endpoints, cards) as host, pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, REAL_KEY)
        ctx = _scored_run(home, ledger, 3)
        row = judge_delivered(ctx, host)
        assert row.verdict is None and row.outcome in ("provider_error", "upstream_timeout")
        assert ledger.get_run(ctx.run_id).status == RunState.SCORED
    ledger.close()


def test_tree_diff_is_bounded_and_in_path_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        (root / ".git").mkdir(parents=True)
        (root / ".git" / "HEAD").write_text(root.name)                   # never in the diff
    (a / "keep.py").write_text("x = 1\n")
    (b / "keep.py").write_text("x = 1\n")
    (a / "z.py").write_text("old\n")
    (b / "z.py").write_text("new")
    (b / "m.py").write_text("added\n")
    diff = tree_diff(a, b, 10_000)
    assert diff == ("--- /dev/null\n+++ b/m.py\n@@ -0,0 +1 @@\n+added\n"
                    "--- a/z.py\n+++ b/z.py\n@@ -1 +1 @@\n-old\n+new\n\\ No newline at end of file\n")
    assert tree_diff(a, b, 10) == "--- /dev/null\n+++ b/m.py\n@@ -0,0 +1 @@\n+added\n"   # stops past the bound


def test_on_a_task_without_tests_the_verdict_stands_alone(tmp_path: Path, home: Home) -> None:
    """An ml task (flight-delays: scored, no tests): the judge reads its description and the diff from its
    repo; the run's record has the judge's verdict and no tests' outcome beside it."""
    from orchestrator.specs import load_task

    task = load_task("flight-delays")
    ledger = Ledger(tmp_path / "ledger.sqlite", create=True)
    run_id = plan(ledger)
    drive(ledger, run_id, RunState.AUDITED)
    workspace = home.delivered_dir(run_id) / "workspace"
    shutil.copytree(task.repo_dir, workspace)
    (workspace / "train.py").write_text((workspace / "train.py").read_text() + "\n# tuned\n")
    req = RunRequest(task=task, budget=load_budget("smoke"), agent=resolve_agent("noop"), data_dir=home.root,
                     seed=5, judge=SPEC)
    ctx = RunContext(home, ledger, None, req, run_id)  # type: ignore[arg-type]
    with standin_gateway(tmp_path / "model", VERDICTS) as setup:
        assert needs_judge(ctx)
        row = judge_delivered(ctx, setup.host)
        (call,) = setup.calls(f"{run_id}.judge.{SPEC.name}")
    assert row.verdict == ("pass" if call["variant"] == -1 else "fail")
    view = run_row(ledger, run_id)
    assert view["outcome"] is None and view["judge_outcome"] is (row.verdict == "pass")
    (record,) = read_transcript(ctx.run_dir / f"judge-{SPEC.name}.jsonl.gz")
    body = record["request"]["body"]
    assert "Predict whether a flight departs at least 15 minutes late." in body and "+# tuned" in body
    assert "holdout.labels" not in body and ledger.get_run(run_id).status == RunState.AUDITED
    ledger.close()


def test_prepare_checks_the_judge_before_the_run_starts(tmp_path: Path) -> None:
    """check_judge (the judge's part of `prepare`): a ConfigError naming the judge and the fix."""
    from orchestrator.failures import ConfigError
    from orchestrator.run.judge import check_judge

    run_id = "r-20261203065333-13e5a9"
    with pytest.raises(ConfigError, match="judge standin-judge: its calls go through the model gateway"):
        check_judge(SPEC, None, run_id)
    with standin_gateway(tmp_path / "model", VERDICTS) as setup:
        check_judge(SPEC, setup.host, run_id)                                 # fits, served, priced
        with pytest.raises(ConfigError, match="judge standin-judge: .*nowhere"):
            check_judge(SPEC.model_copy(update={"endpoint": "nowhere"}), setup.host, run_id)
        with pytest.raises(ConfigError, match="judge standin-judge: .*does not list model 'unpriced'"):
            check_judge(SPEC.model_copy(update={"model": "unpriced"}), setup.host, run_id)
        long = SPEC.model_copy(update={"name": "j" * 80})
        with pytest.raises(ConfigError, match="longer than a unix socket allows"):
            check_judge(long, setup.host, run_id)


def test_what_is_judged_of_failed_runs(tmp_path: Path, home: Home) -> None:
    """A run that delivered is judged, also when the scorer could not score it (failed/unscorable: its diff
    is there); a counted run that delivered nothing (failed/agent) gets a `not_delivered` row, no call, no
    cost; an attempt that does not count (failed/infra, retried; cancelled) gets no row at all."""
    ledger = Ledger(tmp_path / "ledger.sqlite", create=True)
    with standin_gateway(tmp_path / "model", VERDICTS) as setup:
        ctx = _scored_run(home, ledger, 4)     # its delivered tree on disk; then the ledger says how it ended
        unscorable = plan(ledger, task="calc-add-negative", agent="oracle")
        drive(ledger, unscorable, RunState.DELIVERED)
        ledger.advance(unscorable, RunState.FAILED, failure_class="unscorable", reason="no_train_py: gone")
        shutil.copytree(home.delivered_dir(ctx.run_id), home.delivered_dir(unscorable))
        crashed = plan(ledger, task="calc-add-negative", agent="oracle")
        drive(ledger, crashed, RunState.RUNNING)
        ledger.advance(crashed, RunState.FAILED, failure_class="agent", reason="agent_crashed: exit 3")
        infra = plan(ledger, task="calc-add-negative", agent="oracle")
        drive(ledger, infra, RunState.FAILED)
        cancelled = plan(ledger, task="calc-add-negative", agent="oracle")
        drive(ledger, cancelled, RunState.CANCELLED)
        rows = {}
        for run_id in (unscorable, crashed, infra, cancelled):
            c = RunContext(home, ledger, None, ctx.request, run_id)  # type: ignore[arg-type]
            if needs_judge(c):
                rows[run_id] = judge_delivered(c, setup.host)
                assert not needs_judge(c)
        assert set(rows) == {unscorable, crashed}                    # the attempts that count
        (call,) = setup.calls(f"{unscorable}.judge.{SPEC.name}")
        assert rows[unscorable].verdict == ("pass" if call["variant"] == -1 else "fail") and rows[unscorable].diff_bytes > 0
        assert setup.calls(f"{crashed}.judge.{SPEC.name}") == []      # nothing delivered: nothing asked
        nd = rows[crashed]
        assert (nd.verdict, nd.outcome, nd.cost_usd, nd.input_tokens, nd.transcript_sha256) == (
            None, "not_delivered", None, 0, None) and nd.spec_sha256 == SPEC.digest()
        (judged,) = ledger.events(crashed, "judged")
        assert judged.detail["outcome"] == "not_delivered"
        view = run_row(ledger, crashed)
        assert (view["outcome"], view["outcome_reason"]) == (None, None)    # not a tests-task run in meta
        assert (view["judge_outcome"], view["judge_reason"], view["judge_cost_usd"]) == (None, "not_delivered", None)
        assert ledger.get_run(crashed).status == RunState.FAILED           # as it ended
        assert run_row(ledger, unscorable)["judge_reason"] == rows[unscorable].verdict
    ledger.close()
