"""A study graded only by a judge names the calibration it rests on (report/calibration.py): the same judge
(the same spec digest) against the hidden tests on the ledger's runs that had both; another prompt is another
judge; with none, the report says so. Figures checked against a by-hand confusion and scikit-learn."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from orchestrator.ledger import GradedOutcome, Ledger, RunState
from orchestrator.ledger.judge_verdicts import JudgeVerdict
from orchestrator.report import build_report, validate_runs
from orchestrator.report.calibration import calibration, study_calibrations
from orchestrator.specs.judge import JudgeSpec
from orchestrator.study.export import runs_frame
from tests.ledger.ledger_helpers import drive

PROMPT = "Issue:\n{instruction}\nPatch:\n{diff}\nEnd with VERDICT: PASS or VERDICT: FAIL."
JUDGE = JudgeSpec(name="j", endpoint="e", model="m", prompt=PROMPT)
OTHER_PROMPT = JUDGE.model_copy(update={"prompt": "Be strict.\n" + PROMPT})   # same name and model: another judge
UNCALIBRATED = JudgeSpec(name="fresh", endpoint="e", model="m2", prompt=PROMPT)


def _run(ledger: Ledger, study: str, pairing: str, task: str, repeat: int, tests: bool | None,
         judge: JudgeSpec, verdict: str | None) -> str:
    run_id = ledger.new_run(study_id=study, pairing=pairing, agent=pairing.split("/")[0], model="x", task=task,
                            budget_name="smoke", repeat=repeat + 1)
    drive(ledger, run_id, RunState.SCORED)
    if tests is not None:
        ledger.outcomes.save(run_id, GradedOutcome(passed=tests,
                                                   reason="passed" if tests else "tests_failed"))
    ledger.judges.save(JudgeVerdict(run_id, judge.name, judge.endpoint, judge.model, verdict, "ok", 10,
                                           False, 100, 5, 0.001, None, 0.0, spec_sha256=judge.digest()))
    return run_id


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    """A calibration study (tests and judge on two tests tasks) and a judge-only study, in one ledger."""
    led = Ledger(tmp_path / "ledger.sqlite", create=True)
    calib = led.create_study("calib")
    tests, judged = [], []
    for i in range(20):   # tests pass 10; the judge passes those and 3 failing ones; one answer unreadable
        t = i < 10
        j = t or i < 13
        _run(led, calib, "a/x", f"tests-{i % 2}", i, t, JUDGE, "pass" if j else "fail")
        tests.append(t)
        judged.append(j)
    _run(led, calib, "a/x", "tests-0", 99, False, JUDGE, None)
    for i in range(6):    # the other prompt always agrees: it must not be counted for JUDGE
        _run(led, calib, "b/x", "tests-0", i, i < 3, OTHER_PROMPT, "pass" if i < 3 else "fail")
    open_study = led.create_study("open")
    for i in range(8):
        _run(led, open_study, "a/x" if i % 2 else "b/x", "essay", i, None, JUDGE, "pass" if i % 3 else "fail")
    led.by_hand = (tests, judged)  # type: ignore[attr-defined]
    return led


def test_a_judge_only_study_names_its_calibration(ledger: Ledger, tmp_path: Path) -> None:
    tests, judged = ledger.by_hand  # type: ignore[attr-defined]
    study = ledger.get_study_by_name("open")
    assert study is not None
    runs = validate_runs(runs_frame(ledger, study.study_id), source="open")
    assert set(runs["judge_spec_sha256"]) == {JUDGE.digest()}
    paths = build_report(runs, tmp_path / "r", seed=0, judge_calibrations=study_calibrations(ledger, runs))
    row = pd.read_csv(paths.tables["judge_calibration"]).iloc[0]
    assert (row.runs, row.tasks, row.unreadable) == (20, 2, 1)
    assert (row.both_pass, row.false_pass, row.false_fail, row.both_fail) == (10, 3, 0, 7)
    assert row.agreement == pytest.approx(17 / 20) and row.false_pass_rate == pytest.approx(0.3)
    assert row.false_fail_rate == 0 and row.score_bias == pytest.approx(0.15)
    assert row.kappa == pytest.approx(cohen_kappa_score(tests, judged), abs=1e-12)
    text = (tmp_path / "r" / "summary.md").read_text()
    assert "a model's verdict" in text and "on 20 runs of 2 task(s) graded by both" in text
    assert f"kappa {cohen_kappa_score(tests, judged):.3f}" in text and "no calibration" not in text
    other = calibration(ledger, OTHER_PROMPT.digest())
    assert other is not None and other.confusion.n == 6 and other.figures is not None and other.figures.agreement == 1


def test_without_a_calibration_the_report_says_so(ledger: Ledger, tmp_path: Path) -> None:
    fresh = ledger.create_study("fresh")
    for i in range(4):
        _run(ledger, fresh, "a/x", "essay", i, None, UNCALIBRATED, "pass" if i % 2 else "fail")
    runs = validate_runs(runs_frame(ledger, fresh), source="fresh")
    cal = study_calibrations(ledger, runs)
    assert list(cal) == [UNCALIBRATED.digest()]
    c = cal[UNCALIBRATED.digest()]
    assert c is not None and c.figures is None and c.confusion.n == 0   # its only verdicts have no reference
    paths = build_report(runs, tmp_path / "r", seed=0, judge_calibrations=cal)
    assert "judge_calibration" not in paths.tables
    text = (tmp_path / "r" / "summary.md").read_text()
    assert f"Judge spec sha256 {UNCALIBRATED.digest()[:12]} rests on no calibration" in text
