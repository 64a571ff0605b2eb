"""`sbx study plan` / `run` check a study's judge like a pairing's model side (cli/study.py _check_models):
its endpoint, key, model and rate card; a problem is a ConfigError naming the judge before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from orchestrator.cli.study import _check_models
from orchestrator.failures import ConfigError
from orchestrator.specs.study import load_study
from tests.run.standin_setup import CARD_DATE, KEY_ENV, MODEL, PRICE, REAL_KEY, write_model_files

PROMPT = "Issue:\n{instruction}\nPatch:\n{diff}\nEnd with VERDICT: PASS or VERDICT: FAIL."


def _study(tmp_path: Path, **judge: str):
    data = {"name": "s", "task": "calc-add-negative", "pairings": [{"agent": "oracle"}], "repeats": 1,
            "judge": {"name": "j", "endpoint": "standin-chat", "model": MODEL, "prompt": PROMPT, **judge}}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(data))
    return load_study(tmp_path / "study.yaml")


def test_the_judge_is_checked_and_priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoints, cards = write_model_files(tmp_path / "model", "http://127.0.0.1:9")
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    found = _check_models(_study(tmp_path), endpoints, cards)
    assert found == {"judge j": {"agent": None, "model": MODEL, "endpoint": "standin-chat", "api": "openai-chat",
                                 "rate_card": CARD_DATE.isoformat(), "price": PRICE.model_dump()}}
    with pytest.raises(ConfigError, match=r"s: judge j: .*nowhere"):
        _check_models(_study(tmp_path, endpoint="nowhere"), endpoints, cards)
    with pytest.raises(ConfigError, match=r"s: judge j: .*other-model"):
        _check_models(_study(tmp_path, model="other-model"), endpoints, cards)
    with pytest.raises(ConfigError, match=r"s: judge j: .*no endpoints file"):
        _check_models(_study(tmp_path), tmp_path / "missing.yaml", cards)
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ConfigError, match=r"s: judge j: .*" + KEY_ENV):
        _check_models(_study(tmp_path), endpoints, cards)


def test_a_job_carries_the_judge_and_its_digest(tmp_path: Path) -> None:
    """What a slot (a Ray node's too) receives: the study's judge as the driver validated it and its digest;
    the node's run request grades with that judge, and a judge that reads otherwise there is refused."""
    import pickle
    from dataclasses import replace

    from orchestrator.failures import DataError
    from orchestrator.home import Home
    from orchestrator.ledger import Ledger
    from orchestrator.specs.task import load_tests_task
    from orchestrator.study.backend import Slot
    from orchestrator.study.job import job_request
    from orchestrator.study.runner import StudyRunner

    spec = _study(tmp_path)
    assert spec.judge is not None
    home = Home(tmp_path / "home")
    with Ledger(home.ledger_path, create=True) as ledger:
        runner = StudyRunner(spec, home, ledger, None, None)  # type: ignore[arg-type]  # _job uses no backend
        runner.study_id = "s"
        job = pickle.loads(pickle.dumps(runner._job(runner.plan[0], "r-1", "run")))   # as Ray ships it
    assert job.judge == spec.judge.model_dump(mode="json", by_alias=True) and job.judge_digest == spec.judge.digest()
    task, slot = load_tests_task("calc-add-negative"), Slot("node", 0, "0")
    req = job_request(home, job, slot, task)
    assert req.judge == spec.judge and req.judge is not None and req.judge.digest() == job.judge_digest
    changed = replace(job, judge={**job.judge, "prompt": "Be lenient.\n" + PROMPT})
    with pytest.raises(DataError, match=r"judge j is sha256:[0-9a-f]{64} here, but the job says"):
        job_request(home, changed, slot, task)
    assert job_request(home, replace(job, judge=None, judge_digest=None), slot, task).judge is task.judge  # none


def test_a_resumed_study_writes_a_failed_runs_missing_judge_row(tmp_path: Path) -> None:
    """The driver stopped after a run failed as the agent's but before its judge's `not_delivered` row was
    written: the next `sbx study run` finishes that run (a `finish` job), and only that."""
    from orchestrator.home import Home
    from orchestrator.ledger import Ledger, RunState
    from orchestrator.ledger.judge_verdicts import NOT_DELIVERED, JudgeVerdict
    from orchestrator.study.runner import StudyRunner, open_study

    spec = _study(tmp_path)
    assert spec.judge is not None
    home = Home(tmp_path / "home")
    with Ledger(home.ledger_path, create=True) as ledger:
        runner = StudyRunner(spec, home, ledger, None, None)  # type: ignore[arg-type]  # pending() uses no backend
        runner.study_id = open_study(ledger, spec)
        (job,) = runner.pending()
        for to in (RunState.STARTING, RunState.RUNNING):
            ledger.advance(job.run_id, to)
        ledger.advance(job.run_id, RunState.FAILED, failure_class="agent", reason="agent_crashed: exit 3")
        (again,) = runner.pending()
        assert (again.run_id, again.phase, again.judge_digest) == (job.run_id, "finish", spec.judge.digest())
        ledger.judges.save(JudgeVerdict(job.run_id, "j", "standin-chat", MODEL, None, NOT_DELIVERED, 0, False,
                                               0, 0, None, None, 0.0, spec_sha256=spec.judge.digest()))
        assert runner.pending() == []
