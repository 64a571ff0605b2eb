"""How far a model's pass/fail verdicts agree with the tests' (issue 26: a judge measured against the tests).

Plain counts in: `Confusion` holds one 2x2 table, rows the reference (the hidden tests), columns the judge.
Kappa's interval uses the large-sample variance of Fleiss, Cohen & Everitt (1969), as statsmodels'
`cohens_kappa` does (its `kappa_low`/`kappa_upp`); tests check both against statsmodels and scikit-learn.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist


@dataclass(frozen=True)
class Confusion:
    """Runs by (tests' verdict, judge's verdict)."""

    both_pass: int = 0
    false_pass: int = 0     # tests fail, judge passes: the judge missed a failure
    false_fail: int = 0     # tests pass, judge fails
    both_fail: int = 0

    @classmethod
    def of(cls, pairs: Iterable[tuple[bool, bool]]) -> Confusion:
        """From (tests passed, judge passed) per run; a run missing either is the caller's to drop and count."""
        c = [0, 0, 0, 0]
        for tests, judge in pairs:
            c[(0 if judge else 1) if tests else (2 if judge else 3)] += 1
        return cls(both_pass=c[0], false_fail=c[1], false_pass=c[2], both_fail=c[3])

    @property
    def n(self) -> int:
        return self.both_pass + self.false_pass + self.false_fail + self.both_fail

    @property
    def tests_pass(self) -> int:
        return self.both_pass + self.false_fail

    @property
    def judge_pass(self) -> int:
        return self.both_pass + self.false_pass


@dataclass(frozen=True)
class Agreement:
    n: int
    agreement: float
    kappa: float | None          # None when chance agreement is 1 (one verdict throughout): undefined
    kappa_low: float | None
    kappa_high: float | None
    false_pass_rate: float | None   # of the runs the tests failed, the share the judge passed
    false_fail_rate: float | None   # of the runs the tests passed, the share the judge failed
    tests_pass_rate: float
    judge_pass_rate: float
    bias: float                  # judge pass rate - tests pass rate: what the judge adds to a score


def agreement(c: Confusion, level: float = 0.95) -> Agreement:
    """How often does the judge agree with the tests, beyond chance (Cohen's kappa, with an interval), and
    which way are its errors?"""
    n = c.n
    if n == 0:
        raise ValueError("no runs with both verdicts")
    p = [[c.both_pass / n, c.false_fail / n], [c.false_pass / n, c.both_fail / n]]  # rows tests, cols judge
    rows = [p[0][0] + p[0][1], p[1][0] + p[1][1]]
    cols = [p[0][0] + p[1][0], p[0][1] + p[1][1]]
    po = p[0][0] + p[1][1]
    pe = rows[0] * cols[0] + rows[1] * cols[1]
    kappa = low = high = None
    if pe < 1:
        kappa = (po - pe) / (1 - pe)
        a = sum(p[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in range(2))
        b = (1 - kappa) ** 2 * sum(p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
        var = max((a + b - (kappa - pe * (1 - kappa)) ** 2) / (1 - pe) ** 2 / n, 0.0)
        half = NormalDist().inv_cdf(0.5 + level / 2) * math.sqrt(var)
        low, high = kappa - half, kappa + half
    fails, passes = c.false_pass + c.both_fail, c.tests_pass
    return Agreement(n=n, agreement=po, kappa=kappa, kappa_low=low, kappa_high=high,
                     false_pass_rate=c.false_pass / fails if fails else None,
                     false_fail_rate=c.false_fail / passes if passes else None,
                     tests_pass_rate=c.tests_pass / n, judge_pass_rate=c.judge_pass / n,
                     bias=(c.judge_pass - c.tests_pass) / n)


def gap_bias(a: Confusion, b: Confusion) -> float:
    """How much does grading by the judge move the gap between two pairings' pass rates (A - B)?"""
    return (a.judge_pass / a.n - b.judge_pass / b.n) - (a.tests_pass / a.n - b.tests_pass / b.n)
