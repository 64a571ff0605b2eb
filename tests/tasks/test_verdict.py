"""Verdicts from real pytest reports and from every way a grading can go wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.tasks.verdict import RunFacts, Verdict, combine, decide_pytest, decide_script, parse_reward

from .conftest import run_pytest

F = "tests/test_sample.py"
GOOD_F2P = (f"{F}::test_ok", f"{F}::test_param[a::b]")
GOOD_P2P = (f"{F}::TestGroup::test_in_class", f"{F}::test_param[x[y]]")


def test_pass_needs_every_expected_test_and_ignores_others(sample_report) -> None:
    code, xml = sample_report
    v = decide_pytest(RunFacts(code, report=xml), GOOD_F2P, GOOD_P2P)
    assert v.passed and v.reason == "passed"
    assert v.counts(GOOD_F2P) == (2, 2) and v.counts(GOOD_P2P) == (2, 2)


@pytest.mark.parametrize(("f2p", "p2p", "reason", "state"), [
    ((f"{F}::test_fails",), GOOD_P2P, "tests_failed", "failed"),
    (GOOD_F2P, (f"{F}::test_setup_error",), "tests_failed", "error"),
    (GOOD_F2P, (f"{F}::test_teardown_error",), "tests_failed", "error"),
    ((f"{F}::test_skipped",), (), "tests_failed", "skipped"),
    ((f"{F}::test_xfail",), (), "tests_failed", "skipped"),
    (GOOD_F2P, (f"{F}::test_gone",), "tests_missing", "missing"),
])
def test_any_expected_test_not_passing_fails(sample_report, f2p, p2p, reason, state) -> None:
    code, xml = sample_report
    v = decide_pytest(RunFacts(code, report=xml), f2p, p2p)
    assert not v.passed and v.reason == reason
    assert state in v.tests.values()


@pytest.mark.parametrize(("facts", "reason"), [
    (RunFacts(None, timed_out=True, seconds=601), "timeout"),
    (RunFacts(137, oom=True), "oom"),
    (RunFacts(0, report=None), "no_report"),
    (RunFacts(0, report=b"  "), "no_report"),
    (RunFacts(137, report=None), "crash"),
    (RunFacts(None, report=None), "no_report"),
    (RunFacts(1, report=b"<testsuites>", report_truncated=True), "malformed_report"),
    (RunFacts(1, report=b"<testsuites><oops/></testsuites>"), "malformed_report"),
])
def test_broken_runs_fail_with_a_reason(facts: RunFacts, reason: str) -> None:
    v = decide_pytest(facts, GOOD_F2P, GOOD_P2P)
    assert not v.passed and v.reason == reason
    assert set(v.tests.values()) <= {"missing"}


def test_exit_status_must_agree_with_the_report(sample_report, tmp_path: Path) -> None:
    code, xml = sample_report
    assert decide_pytest(RunFacts(0, report=xml), GOOD_F2P, ()).reason == "inconsistent"
    assert decide_pytest(RunFacts(3, report=xml), GOOD_F2P, ()).reason == "crash"
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    code_ok, xml_ok = run_pytest(tmp_path, "tests")
    assert code_ok == 0
    assert decide_pytest(RunFacts(0, report=xml_ok), ("tests/test_a.py::test_a",), ()).passed
    v = decide_pytest(RunFacts(1, report=xml_ok), ("tests/test_a.py::test_a",), ())
    assert v.reason == "inconsistent"


def test_collection_error(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_core.py").write_text("import pkg_that_is_broken\ndef test_a():\n    pass\n")
    code, xml = run_pytest(tmp_path, "tests")
    v = decide_pytest(RunFacts(code, report=xml), ("tests/test_core.py::test_a",), ())
    assert v.reason == "collection_error" and "tests.test_core" in v.detail


def test_script_rewards() -> None:
    assert decide_script(RunFacts(0, report=b"1\n"), 1.0).passed
    assert decide_script(RunFacts(0, report=b"0.75"), 0.5).reward == 0.75
    v = decide_script(RunFacts(1, report=b"0"), 1.0)
    assert not v.passed and v.reason == "tests_failed" and v.reward == 0.0
    assert decide_script(RunFacts(0, report=None), 1.0).reason == "no_report"
    assert decide_script(RunFacts(137, report=None), 1.0).reason == "no_report"
    assert decide_script(RunFacts(None, timed_out=True), 1.0).reason == "timeout"
    for bad in (b"nan", b"inf", b"1 1", b"yes", b"\xff\xfe", b"9" * 100):
        assert decide_script(RunFacts(0, report=bad), 1.0).reason == "malformed_report", bad
    with pytest.raises(ValueError):
        parse_reward(b"")


def test_repeats_pass_only_when_all_pass_and_report_flaky_tests() -> None:
    a = Verdict(True, "passed", tests={"t1": "passed", "t2": "passed"})
    b = Verdict(False, "tests_failed", tests={"t1": "passed", "t2": "failed"})
    r = combine([a, a, a])
    assert r.passed and r.agree and r.flaky == {}
    r = combine([a, b, a])
    assert not r.passed and not r.agree and r.reason == "tests_failed"
    assert r.flaky == {"t2": {"passed": 2, "failed": 1}}
    with pytest.raises(ValueError):
        combine([])
