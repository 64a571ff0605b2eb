"""A judge's calibration (issue 26): how the same judge (the same `JudgeSpec.digest()`: endpoint, model,
prompt, parse rule) agreed with the hidden tests on runs that had both, read from the ledger.

A study graded only by a judge has no reference of its own; its report names the calibration its verdicts
rest on (agreement, kappa with its interval, both error rates, on how many runs of which tasks), or says it
has none. Only the same digest counts: another prompt or model is another judge, measured apart. Verdicts the
parse rule could not read, and runs the tests did not grade, are left out (and counted); so are runs that
delivered nothing (`not_delivered` rows: neither grader judged anything, they say nothing of the judge).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from orchestrator.ledger import Ledger
from orchestrator.ledger.judge_verdicts import NOT_DELIVERED
from orchestrator.stats.agreement import Agreement, Confusion, agreement


@dataclass(frozen=True)
class JudgeCalibration:
    spec_sha256: str
    judge: str
    model: str
    tasks: tuple[str, ...]
    studies: tuple[str, ...]
    confusion: Confusion
    figures: Agreement | None   # None: no run had both verdicts
    unreadable: int             # verdicts of this judge that the parse rule could not read (left out)

    def describe(self) -> str:
        """One sentence for the report."""
        head = f"judge {self.judge} ({self.model}, spec sha256 {self.spec_sha256[:12]})"
        a = self.figures
        if a is None:
            return f"none: {head} has no verdicts on runs the hidden tests graded"
        kappa = "undefined (one verdict throughout)" if a.kappa is None else (
            f"{a.kappa:.3f}" + (f" [{a.kappa_low:.3f}, {a.kappa_high:.3f}]" if a.kappa_low is not None else ""))
        rate = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731 - a local formatter
        return (f"{head} on {a.n} runs of {len(self.tasks)} task(s) graded by both the tests and this judge "
                f"({', '.join(self.tasks)}): agreement {a.agreement:.3f}, kappa {kappa}, false pass rate "
                f"{rate(a.false_pass_rate)}, false fail rate {rate(a.false_fail_rate)}, score bias {a.bias:+.3f}")

    def row(self) -> dict[str, object]:
        a = self.figures
        return {"judge": self.judge, "model": self.model, "spec_sha256": self.spec_sha256, "runs": self.confusion.n,
                "tasks": len(self.tasks), "unreadable": self.unreadable, "both_pass": self.confusion.both_pass,
                "false_pass": self.confusion.false_pass, "false_fail": self.confusion.false_fail,
                "both_fail": self.confusion.both_fail, "agreement": a.agreement if a else None,
                "kappa": a.kappa if a else None, "kappa_low": a.kappa_low if a else None,
                "kappa_high": a.kappa_high if a else None, "false_pass_rate": a.false_pass_rate if a else None,
                "false_fail_rate": a.false_fail_rate if a else None, "score_bias": a.bias if a else None}


def calibration(ledger: Ledger, spec_sha256: str) -> JudgeCalibration | None:
    """The calibration of the judge with this digest from every run in the ledger that the hidden tests and
    it both graded (counted attempts only); None when the ledger holds no verdict of that judge at all."""
    mine = [v for v in ledger.judges.of_runs() if v.spec_sha256 == spec_sha256]
    if not mine:
        return None
    pairs, tasks, studies, unreadable = [], set(), set(), 0
    for v in mine:
        if v.outcome == NOT_DELIVERED:
            continue  # nothing was judged
        run = ledger.get_run(v.run_id)
        outcome = ledger.outcomes.of_run(v.run_id)
        if outcome is None or not run.counted:
            continue  # no reference: a run without tests (or not graded) calibrates nothing
        if v.verdict is None:
            unreadable += 1
            continue
        pairs.append((outcome.passed, v.verdict == "pass"))
        tasks.add(run.task)
        if run.study_name:
            studies.add(run.study_name)
    c = Confusion.of(pairs)
    return JudgeCalibration(spec_sha256, mine[0].judge, mine[0].model, tuple(sorted(tasks)), tuple(sorted(studies)),
                            c, agreement(c) if c.n else None, unreadable)


def calibrations(ledger: Ledger, digests: Iterable[str]) -> dict[str, JudgeCalibration | None]:
    """`calibration` of each digest."""
    return {d: calibration(ledger, d) for d in sorted(set(digests))}


def study_calibrations(ledger: Ledger, runs: Any) -> dict[str, JudgeCalibration | None]:
    """The calibrations of the judges a study's runs table (a DataFrame) names in `judge_spec_sha256`."""
    if "judge_spec_sha256" not in runs.columns:
        return {}
    return calibrations(ledger, (str(d) for d in runs["judge_spec_sha256"].dropna()))
