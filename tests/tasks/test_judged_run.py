"""A tests-task run through the whole lifecycle with a judge (issue 26): the oracle fixes calc-add-negative in
its sandbox, the hidden tests grade it, and the stand-in judge (through the host's gateway, after the
sandbox is gone) grades the same delivery; its verdict is the stand-in's, in its own ledger row and in the
run's record beside the tests' outcome, and its cost is not the agent's (the oracle talks to no model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.agents import resolve_agent
from orchestrator.ledger import Ledger
from orchestrator.run.record import full_record
from orchestrator.run.request import RunRequest
from orchestrator.specs import load_budget
from orchestrator.specs.judge import JudgeSpec
from tests.run.standin_setup import MODEL, expected_cost, standin_gateway
from tests.run.test_judge_step import PROMPT, VERDICTS

pytestmark = [pytest.mark.docker]

SPEC = JudgeSpec(name="standin-judge", endpoint="standin-chat", model=MODEL, prompt=PROMPT, limit_usd=0.05)


def test_a_judged_tests_task_run(calc_task, built_images, docker_client, home, tmp_path: Path) -> None:
    task, _image = calc_task
    task = task.model_copy(update={"judge": SPEC})   # as a task.yaml with `judge:` loads (tests/specs)
    ledger = Ledger(tmp_path / "ledger.sqlite", create=True)
    with standin_gateway(tmp_path / "model", VERDICTS) as setup:
        req = RunRequest(task=task, budget=load_budget("smoke"), agent=resolve_agent("oracle"), data_dir=home.root,
                         seed=3, datasets=(), judge=task.judge)
        run = setup.run(home, ledger, docker_client, req)
        calls = setup.calls(f"{run.run_id}.judge.{SPEC.name}")
    assert run.record.status == "audited" and run.usage is None and run.calls == []   # the agent: no model
    assert len(calls) == 1 and calls[0]["api"] == "openai-chat" and calls[0]["seed"] == 3
    view = full_record(ledger, run.run_id)
    assert view["outcome"] is True                                  # the hidden tests: the reference
    (verdict,) = view["judge_verdicts"]
    assert verdict["verdict"] == ("pass" if calls[0]["variant"] == -1 else "fail") and verdict["outcome"] == "ok"
    assert view["judge_outcome"] is (verdict["verdict"] == "pass")
    assert verdict["cost_usd"] == pytest.approx(expected_cost(calls)) == view["judge_cost_usd"]
    assert verdict["diff_bytes"] > 0 and verdict["spec_sha256"] == SPEC.digest()
    assert view["meta"]["judge"]["spec_sha256"] == SPEC.digest()
    steps = [e["detail"]["step"] for e in view["events"] if e["kind"] == "step"]
    assert steps.index("judge") > steps.index("evaluate")           # beside the tests, after their grading
    ledger.close()
