"""The `judge:` field of task and study specs (issue 26): validated where it is written, with errors that name
the file, line and key; a study's judge replaces its tasks'; a spec without one is stored as before; the judge
is not part of a run's configuration (it never meets the agent)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from orchestrator.agents import resolve_agent
from orchestrator.failures import ConfigError
from orchestrator.run.config_hash import task_config
from orchestrator.run.request import RunRequest
from orchestrator.specs import load_budget
from orchestrator.specs.study import load_study
from orchestrator.specs.task import load_any_task, load_tests_task
from orchestrator.study.judges import study_judges

REPO_TASKS = Path(__file__).resolve().parents[2] / "tasks"
PROMPT = "Issue:\n{instruction}\nPatch:\n{diff}\nEnd with VERDICT: PASS or VERDICT: FAIL."
JUDGE = {"name": "task-judge", "endpoint": "anthropic", "model": "claude-x", "prompt": PROMPT}


def _task(tmp_path: Path, judge: object) -> Path:
    """calc-add-negative (committed trees) copied, with `judge` in its task.yaml."""
    dst = tmp_path / "calc-add-negative"
    shutil.copytree(REPO_TASKS / "calc-add-negative", dst)
    data = yaml.safe_load((dst / "task.yaml").read_text())
    data["judge"] = judge
    (dst / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dst


def _study(tmp_path: Path, task: Path, judge: object | None = None) -> Path:
    data: dict = {"name": "s", "task": str(task), "pairings": [{"agent": "oracle"}], "repeats": 1}
    if judge is not None:
        data["judge"] = judge
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_task_names_a_judge(tmp_path: Path) -> None:
    task = load_tests_task(_task(tmp_path, {**JUDGE, "verdict": {"pattern": "^RESULT=(OK|BAD)$", "pass": "OK",
                                                                 "fail": "BAD"}}))
    assert task.judge is not None and task.judge.name == "task-judge" and task.judge.verdict.pass_ == "OK"
    assert task.judge.limit_usd == 0.5 and task.judge.max_diff_bytes == 65536   # the documented defaults


@pytest.mark.parametrize(("judge", "error"), [
    ({**JUDGE, "key": "sk-live"}, r"task.yaml:\d+: judge.key: Extra inputs are not permitted"),
    ({**JUDGE, "prompt": "{instruction} only"}, r"judge.prompt: Value error, the prompt needs \{diff\} exactly once"),
    ({**JUDGE, "prompt": PROMPT + "{hidden_tests}"}, r"judge.prompt: .*never sees the hidden tests"),
    ({**JUDGE, "verdict": {"pattern": "PASS|FAIL"}}, r"judge.verdict.pattern: .*exactly one group"),
    ({**JUDGE, "limit_usd": 0}, r"judge.limit_usd: Input should be greater than 0"),
    ({k: v for k, v in JUDGE.items() if k != "model"}, r"judge.model: Field required"),
    ("sonnet", r"judge: Input should be a valid dictionary"),
])
def test_a_bad_task_judge_is_refused_naming_the_key(tmp_path: Path, judge: object, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        load_any_task(_task(tmp_path, judge))


def test_a_study_judge_replaces_the_tasks(tmp_path: Path) -> None:
    task = _task(tmp_path, JUDGE)
    plain = load_study(_study(tmp_path, task))
    assert plain.judge is None and "judge" not in plain.canonical()        # stored as before
    assert {t: j.name for t, j in study_judges(plain).items()} == {str(task): "task-judge"}
    assert plain.endpoints_used == []                                        # the task's judge is the task's
    study = load_study(_study(tmp_path, task, {**JUDGE, "name": "study-judge", "endpoint": "openai"}))
    assert {t: (j.name, j.endpoint) for t, j in study_judges(study).items()} == {str(task): ("study-judge", "openai")}
    assert study.canonical()["judge"]["name"] == "study-judge"
    assert study.endpoints_used == ["openai"]                               # so the study starts a gateway


def test_a_bad_study_judge_is_refused_naming_file_line_and_key(tmp_path: Path) -> None:
    path = _study(tmp_path, REPO_TASKS / "calc-add-negative", {**JUDGE, "name": "has space"})
    with pytest.raises(ConfigError, match=r"study.yaml:\d+: judge.name: String should match pattern"):
        load_study(path)


def test_the_judge_is_not_configuration(tmp_path: Path) -> None:
    """Runs with and without a judge have the same configuration hash: the judge grades after the run."""
    budget, agent = load_budget("smoke"), resolve_agent("oracle")
    judged, bare = load_any_task(_task(tmp_path, JUDGE)), load_any_task(REPO_TASKS / "calc-add-negative")
    a = task_config(RunRequest(task=judged, budget=budget, agent=agent, data_dir=tmp_path, judge=judged.judge))
    b = task_config(RunRequest(task=bare, budget=budget, agent=agent, data_dir=tmp_path))
    assert a == b and "judge" not in a["spec"]
    assert judged.judge is not None and judged.judge.digest() != judged.judge.model_copy(
        update={"model": "other"}).digest()


def test_a_study_job_carries_the_judge_to_its_run_request(tmp_path: Path, home) -> None:
    """The driver puts the run's judge in the job (the study's, else the task's, as validated); the node's run
    request has it back as the same spec (its digest, so the same calibration)."""
    from orchestrator.ledger import Ledger
    from orchestrator.study.backend import Slot
    from orchestrator.study.job import job_request
    from orchestrator.study.runner import StudyRunner

    task = _task(tmp_path, {**JUDGE, "verdict": {"pattern": "^(Y|N)$", "pass": "Y", "fail": "N"}})
    ledger = Ledger(tmp_path / "ledger.sqlite", create=True)
    for study_judge, want in ((None, "task-judge"), ({**JUDGE, "name": "study-judge"}, "study-judge")):
        spec = load_study(_study(tmp_path, task, study_judge))
        runner = StudyRunner(spec, home, ledger, None, None)  # type: ignore[arg-type]  # no run is launched
        job = runner._job(runner.plan[0], "r-1", "run")
        assert job.judge is not None and job.judge["name"] == want
        req = job_request(home, job, Slot("here", 0, "0"), task=load_any_task(task))
        expected = spec.judge if spec.judge is not None else load_any_task(task).judge
        assert req.judge == expected and req.judge is not None and req.judge.digest() == expected.digest()
    bare = load_study(_study(tmp_path, REPO_TASKS / "calc-add-negative"))
    runner = StudyRunner(bare, home, ledger, None, None)  # type: ignore[arg-type]
    job = runner._job(runner.plan[0], "r-1", "run")
    assert job.judge is None and job.endpoints_file is None
    assert job_request(home, job, Slot("here", 0, "0"), task=load_any_task(REPO_TASKS / "calc-add-negative")).judge is None
    ledger.close()


def test_a_resumed_study_finishes_a_run_its_judge_has_not_graded(tmp_path: Path, home) -> None:
    """An audited run of a judged study with no verdict row (the driver stopped between the steps) is a
    `finish` job on resume; with its verdict, nothing is left to do."""
    from orchestrator.ledger import Ledger, RunState
    from orchestrator.ledger.judge_verdicts import JudgeVerdict
    from orchestrator.study.runner import StudyRunner
    from tests.ledger.ledger_helpers import drive

    spec = load_study(_study(tmp_path, _task(tmp_path, JUDGE)))
    ledger = Ledger(tmp_path / "ledger.sqlite", create=True)
    runner = StudyRunner(spec, home, ledger, None, None)  # type: ignore[arg-type]  # no run is launched
    runner.study_id = ledger.create_study(spec.name)
    planned = runner.plan[0]
    run_id = ledger.new_run(task=planned.task, agent="oracle", budget_name=spec.budget, pairing=planned.pairing.name,
                            study_id=runner.study_id, repeat=planned.repeat)
    drive(ledger, run_id, RunState.AUDITED)
    assert [(j.run_id, j.phase) for j in runner.pending()] == [(run_id, "finish")]
    ledger.judges.save(JudgeVerdict(run_id, "task-judge", "anthropic", "claude-x", "pass", "ok", 1, False,
                                           1, 1, 0.0, None, 0.0))
    assert runner.pending() == []
    ledger.close()
