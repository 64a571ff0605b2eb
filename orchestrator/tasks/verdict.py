"""Pass or fail, decided on the host from what one grading produced; flakiness over repeated gradings.

A pytest grading passes iff every fail_to_pass and every pass_to_pass test passed, the report parsed
strictly, and pytest's exit status agrees with the report (0: nothing failed, 1: something did). Every
other ending is a fail with a reason, never a retry and never a pass:

    timeout            the test command passed its time limit
    report_held_open   a process the tests started kept the report stream open after the test command ended
    oom                the kernel's OOM killer struck in the grader
    crash              the test process died (signal, exit status other than 0/1) without a usable report
    no_report          it ended without writing a report (os._exit at import, a killed interpreter)
    malformed_report   the report was refused by the strict parser (too large, DTD, not JUnit)
    collection_error   a test module failed to import and expected tests are missing
    tests_missing      expected test ids are absent from the report
    tests_failed       an expected test failed, errored or was skipped
    inconsistent       pytest's exit status contradicts its own report
    tree_refused       the delivery broke a cap of the grading tree (too many or too large files)

A script grading (Harbor) passes iff the script's reward is at or above the threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from orchestrator.tasks.junit import JunitCaps, ReportError, parse_junit

#: exit statuses of pytest that mean "the session ran": 0 all passed, 1 some failed
_RAN = (0, 1)


@dataclass(frozen=True)
class RunFacts:
    """What the grader observed about one run of the test command (no judgement yet)."""

    exit_code: int | None          # None: never finished (timeout or kill)
    timed_out: bool = False
    oom: bool = False
    report: bytes | None = None    # the JUnit XML (pytest) or the reward file (script); None: none came
    report_truncated: bool = False # more bytes came than the cap allows
    report_held_open: bool = False # a process outlived the test command holding the report stream open
    output_tail: str = ""          # the last few KB the test command printed (diagnostics only)
    seconds: float = 0.0


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str
    detail: str = ""
    #: every expected test id -> passed | failed | error | skipped | missing
    tests: dict[str, str] = field(default_factory=dict)
    reward: float | None = None

    def counts(self, ids: Sequence[str]) -> tuple[int, int]:
        return sum(self.tests.get(i) == "passed" for i in ids), len(ids)


def _failed_run(facts: RunFacts, expected: Sequence[str]) -> Verdict | None:
    """The verdict when the run itself went wrong before any report could count."""
    missing = {i: "missing" for i in expected}
    if facts.timed_out:
        return Verdict(False, "timeout", f"the test command ran past its limit ({facts.seconds:.0f}s)", missing)
    if facts.oom:
        return Verdict(False, "oom", "the grader ran out of memory", missing)
    if facts.report_truncated:
        return Verdict(False, "malformed_report", "the report is larger than its cap", missing)
    if facts.report_held_open:
        return Verdict(False, "report_held_open", "a process the tests started kept the report stream open "
                       "after the test command ended; the report is not trusted", missing)
    if facts.report is None or not facts.report.strip():
        if facts.exit_code in _RAN:
            return Verdict(False, "no_report", f"exit status {facts.exit_code} but no report", missing)
        return Verdict(False, "crash" if facts.exit_code is not None else "no_report",
                       f"exit status {facts.exit_code}; no report", missing)
    return None


def decide_pytest(facts: RunFacts, fail_to_pass: Sequence[str], pass_to_pass: Sequence[str],
                  caps: JunitCaps | None = None) -> Verdict:
    """The verdict of one pytest grading; see the module docstring for the reasons."""
    expected = [*fail_to_pass, *pass_to_pass]
    early = _failed_run(facts, expected)
    if early is not None:
        return early
    assert facts.report is not None
    try:
        report = parse_junit(facts.report, caps)
    except ReportError as exc:
        return Verdict(False, "malformed_report", str(exc), {i: "missing" for i in expected})
    # widened to the Verdict's plain str values (a dict of the narrower Literal is not a dict[str, str])
    tests: dict[str, str] = {i: report.outcome_of(i) or "missing" for i in expected}
    missing = [i for i, o in tests.items() if o == "missing"]
    bad = [i for i, o in tests.items() if o not in ("passed", "missing")]
    if missing and report.collection_errors:
        return Verdict(False, "collection_error", f"{len(report.collection_errors)} module(s) failed to import "
                       f"({', '.join(report.collection_errors[:3])}); {len(missing)} expected test(s) missing", tests)
    if facts.exit_code not in _RAN:
        return Verdict(False, "crash", f"pytest exit status {facts.exit_code}", tests)
    if missing:
        return Verdict(False, "tests_missing", f"{len(missing)} expected test(s) not in the report, e.g. "
                       f"{missing[0]}", tests)
    counts = report.counts
    if facts.exit_code == 0 and (counts["failed"] or counts["error"]):
        return Verdict(False, "inconsistent", "exit status 0 but the report has failures", tests)
    if facts.exit_code == 1 and not (counts["failed"] or counts["error"]):
        return Verdict(False, "inconsistent", "exit status 1 but the report has no failure", tests)
    if bad:
        f2p_bad = sum(1 for i in fail_to_pass if tests[i] != "passed")
        return Verdict(False, "tests_failed", f"{f2p_bad} of {len(fail_to_pass)} fail_to_pass and "
                       f"{len(bad) - f2p_bad} of {len(pass_to_pass)} pass_to_pass did not pass, e.g. {bad[0]} "
                       f"({tests[bad[0]]})", tests)
    return Verdict(True, "passed", f"{len(fail_to_pass)} fail_to_pass and {len(pass_to_pass)} pass_to_pass passed",
                   tests)


def parse_reward(data: bytes) -> float:
    """A Harbor reward file: one finite number (reward.txt). Raises ValueError otherwise."""
    text = data.decode("utf-8", errors="strict").strip()
    if not text or len(text) > 64:
        raise ValueError("the reward file must hold one number")
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"reward {text!r} is not finite")
    return value


def decide_script(facts: RunFacts, threshold: float) -> Verdict:
    """The verdict of one script grading: the reward the test script wrote, against the threshold."""
    early = _failed_run(facts, [])
    if early is not None:
        reason = "no_report" if early.reason in ("no_report", "crash") else early.reason
        return Verdict(False, reason, early.detail.replace("no report", "no reward file"))
    assert facts.report is not None
    try:
        reward = parse_reward(facts.report)
    except (ValueError, UnicodeDecodeError) as exc:
        return Verdict(False, "malformed_report", f"reward file: {exc}")
    if reward >= threshold:
        return Verdict(True, "passed", f"reward {reward:g} >= {threshold:g}", reward=reward)
    return Verdict(False, "tests_failed", f"reward {reward:g} < {threshold:g}", reward=reward)


@dataclass(frozen=True)
class Repeated:
    """The verdict over grade_repeats gradings of one delivery."""

    passed: bool                       # every repeat passed
    reason: str                        # the first failing repeat's reason, or "passed"
    verdicts: tuple[Verdict, ...]
    agree: bool                        # every repeat gave the same pass/fail and per-test outcomes
    flaky: dict[str, dict[str, int]]   # test id -> {outcome: count}, only tests whose outcome varied


def combine(verdicts: Sequence[Verdict]) -> Repeated:
    """Pass iff every repeat passed (a flaky expected test fails the delivery); per-test flakiness."""
    if not verdicts:
        raise ValueError("need at least one grading")
    ids = sorted({i for v in verdicts for i in v.tests})
    flaky: dict[str, dict[str, int]] = {}
    for i in ids:
        seen: dict[str, int] = {}
        for v in verdicts:
            outcome = v.tests.get(i, "missing")
            seen[outcome] = seen.get(outcome, 0) + 1
        if len(seen) > 1:
            flaky[i] = seen
    passed = all(v.passed for v in verdicts)
    agree = not flaky and len({v.passed for v in verdicts}) == 1 and len({v.reason for v in verdicts}) == 1
    reason = next((v.reason for v in verdicts if not v.passed), "passed")
    return Repeated(passed, reason, tuple(verdicts), agree, flaky)
