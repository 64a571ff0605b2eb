"""The report's judge section (issue 26): a model grader measured against the hidden tests.

Per pairing and over all pairings: the confusion table, agreement, Cohen's kappa with its 95% interval,
both error rates (false pass: of the runs the tests failed, the share the judge passed; false fail), the
judge's pass rate beside the tests', the bias this puts on the pairing's score, and the bias on every
paired gap between pairings; cost per verdict where the runs carry `judge_cost_usd`. A study graded only by
a judge (no `outcome`) gets a section that says its verdicts are a model's and which calibration it rests
on: for each judge its runs name (`judge_spec_sha256`), the agreement of that same judge with the tests on
the ledger's runs that had both (report/calibration.py), or that it has none.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from orchestrator.report.prepare import Prepared
from orchestrator.report.render import Section, TableSpec
from orchestrator.report.runs_table import present
from orchestrator.stats.agreement import Confusion, agreement, gap_bias


def _confusion(df: pd.DataFrame) -> tuple[Confusion, int]:
    both = df[["outcome", "judge_outcome"]].dropna()
    return Confusion.of((bool(t), bool(j)) for t, j in both.itertuples(index=False)), len(df) - len(both)


def agreement_table(prep: Prepared) -> pd.DataFrame:
    rows = []
    for name, df in [(p, prep.of(p)) for p in prep.pairings] + [("all pairings", prep.runs)]:
        c, dropped = _confusion(df)
        row: dict[str, object] = {"pairing": name, "runs": c.n, "dropped": dropped, "both_pass": c.both_pass,
                                  "false_pass": c.false_pass, "false_fail": c.false_fail, "both_fail": c.both_fail}
        if c.n:
            a = agreement(c)
            row.update(agreement=a.agreement, kappa=a.kappa, kappa_low=a.kappa_low, kappa_high=a.kappa_high,
                       false_pass_rate=a.false_pass_rate, false_fail_rate=a.false_fail_rate,
                       tests_pass_rate=a.tests_pass_rate, judge_pass_rate=a.judge_pass_rate, score_bias=a.bias)
        if "judge_cost_usd" in df.columns and df["judge_cost_usd"].notna().any():
            row["cost_per_verdict_usd"] = float(df["judge_cost_usd"].dropna().mean())
        rows.append(row)
    return pd.DataFrame(rows).replace({None: np.nan})


def gap_table(prep: Prepared) -> pd.DataFrame:
    rows = []
    for a, b in itertools.combinations(prep.pairings, 2):
        ca, cb = _confusion(prep.of(a))[0], _confusion(prep.of(b))[0]
        if ca.n and cb.n:
            rows.append({"pairing_a": a, "pairing_b": b, "gap_by_tests": ca.tests_pass / ca.n - cb.tests_pass / cb.n,
                         "gap_by_judge": ca.judge_pass / ca.n - cb.judge_pass / cb.n, "gap_bias": gap_bias(ca, cb)})
    return pd.DataFrame(rows)


def _digests(prep: Prepared) -> list[str]:
    if "judge_spec_sha256" not in prep.runs.columns:
        return []
    return sorted({str(d) for d in prep.runs["judge_spec_sha256"].dropna()})


def _calibration_text(prep: Prepared) -> str:
    """Which calibration each judge of the runs rests on, or that it rests on none."""
    none = "It rests on no calibration: no tasks graded by both the tests and this judge."
    digests = _digests(prep)
    if not digests:  # a table from elsewhere: it does not say which judge
        return none + " (The runs table does not say which judge: no judge_spec_sha256 column.)"
    parts = []
    for d in digests:
        c = prep.judge_calibrations.get(d)
        if c is None or c.figures is None:
            parts.append(f"Judge spec sha256 {d[:12]} rests on no calibration: no tasks graded by both the tests "
                         "and this judge.")
        else:
            parts.append(f"Its calibration: {c.describe()}.")
    return " ".join(parts)


def section(prep: Prepared) -> Section:
    s = Section("judge", "The judge against the tests")
    if not present(prep.runs, "judge_outcome"):
        s.skipped = "needs column judge_outcome with values (a task or study that names a judge)"
        return s
    if not present(prep.runs, "outcome"):
        s.intro = ("These runs were graded only by a judge: every pass/fail below is a model's verdict, not a "
                   "test's. " + _calibration_text(prep))
        frame = prep.runs.groupby("pairing")["judge_outcome"].agg(["count", "mean"]).reset_index()
        s.tables.append(TableSpec("judge_only", "Judge's pass rate (a model's verdicts)",
                                  frame.rename(columns={"count": "runs", "mean": "judge_pass_rate"})))
        found = [c for c in (prep.judge_calibrations.get(d) for d in _digests(prep)) if c is not None and c.figures]
        if found:
            s.tables.append(TableSpec("judge_calibration", "The calibration the verdicts rest on (the same judge "
                                      "against the tests, elsewhere in the ledger)",
                                      pd.DataFrame([c.row() for c in found]).replace({None: np.nan})))
        return s
    s.intro = ("Each run graded by the hidden tests (the reference) and by the judge. False pass: of the runs the "
               "tests failed, the share the judge passed; false fail: of those the tests passed, the share it "
               "failed. Kappa's 95% interval: Fleiss-Cohen-Everitt large-sample variance (as statsmodels). Score "
               "bias: the judge's pass rate minus the tests'; gap bias: how far the judge moves each paired gap.")
    s.tables.append(TableSpec("judge_agreement", "Agreement with the tests, per pairing", agreement_table(prep)))
    gaps = gap_table(prep)
    if not gaps.empty:
        s.tables.append(TableSpec("judge_gap_bias", "What the judge does to each paired gap", gaps))
    return s
