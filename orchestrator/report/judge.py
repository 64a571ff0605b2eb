"""The report's judge section (issue 26): a model grader measured against the hidden tests.

Per pairing and over all pairings: the confusion table, agreement, Cohen's kappa with its 95% interval,
both error rates (false pass: of the runs the tests failed, the share the judge passed; false fail), the
judge's pass rate beside the tests', the bias this puts on the pairing's score, and the bias on every
paired gap between pairings; cost per verdict where the runs carry `judge_cost_usd`. A run that delivered
nothing (`judge_reason` not_delivered) is counted apart: out of the agreement, a fail by both in the pass rates. A study graded only by
a judge (no `outcome`) gets a section that says its verdicts are a model's and which calibration it rests
on: for each judge its runs name (`judge_spec_sha256`), the agreement of that same judge with the tests on
the ledger's runs that had both (report/calibration.py), or that it has none.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from orchestrator.ledger.judge_verdicts import NOT_DELIVERED
from orchestrator.report.prepare import Prepared
from orchestrator.report.render import Section, TableSpec
from orchestrator.report.runs_table import present
from orchestrator.report.sections import needs_words
from orchestrator.stats.agreement import Confusion, agreement, gap_bias


def _not_delivered(df: pd.DataFrame) -> pd.Series:
    if "judge_reason" not in df.columns:
        return pd.Series(False, index=df.index)
    return df["judge_reason"] == NOT_DELIVERED


def _confusion(df: pd.DataFrame) -> tuple[Confusion, int, int]:
    """The confusion of the runs both graders graded, the runs that delivered nothing (not judged), and the
    other runs missing a verdict (unparsed, a judge error, not graded)."""
    nd = _not_delivered(df)
    both = df.loc[~nd, ["outcome", "judge_outcome"]].dropna()
    c = Confusion.of((bool(t), bool(j)) for t, j in both.itertuples(index=False))
    return c, int(nd.sum()), int((~nd).sum()) - len(both)


def _scored(c: Confusion, not_delivered: int) -> Confusion:
    """The confusion as a pairing's score counts its runs: a run that delivered nothing fails by both graders
    (the tests' `agent_failed`; the judge had nothing to pass), so it enters the pass rates and the biases,
    never the agreement."""
    return Confusion(c.both_pass, c.false_pass, c.false_fail, c.both_fail + not_delivered)


def agreement_table(prep: Prepared) -> pd.DataFrame:
    rows = []
    for name, df in [(p, prep.of(p)) for p in prep.pairings] + [("all pairings", prep.runs)]:
        c, nd, dropped = _confusion(df)
        row: dict[str, object] = {"pairing": name, "runs": c.n, "not_delivered": nd, "dropped": dropped,
                                  "both_pass": c.both_pass, "false_pass": c.false_pass, "false_fail": c.false_fail,
                                  "both_fail": c.both_fail}
        if c.n:
            a = agreement(c)
            row.update(agreement=a.agreement, kappa=a.kappa, kappa_low=a.kappa_low, kappa_high=a.kappa_high,
                       false_pass_rate=a.false_pass_rate, false_fail_rate=a.false_fail_rate)
        if c.n + nd:
            a = agreement(_scored(c, nd))
            row.update(tests_pass_rate=a.tests_pass_rate, judge_pass_rate=a.judge_pass_rate, score_bias=a.bias)
        if "judge_cost_usd" in df.columns and df["judge_cost_usd"].notna().any():
            row["cost_per_verdict_usd"] = float(df["judge_cost_usd"].dropna().mean())
        rows.append(row)
    return pd.DataFrame(rows).replace({None: np.nan})


def judge_only_table(prep: Prepared) -> pd.DataFrame:
    """Per pairing: the runs with a verdict, those that delivered nothing (each a fail, as a pass/fail score
    counts a failed attempt), and the judge's pass rate over both."""
    rows = []
    for name in prep.pairings:
        df = prep.of(name)
        nd = _not_delivered(df)
        verdicts = df.loc[~nd, "judge_outcome"].dropna().astype(bool)
        n = len(verdicts) + int(nd.sum())
        rows.append({"pairing": name, "runs": len(verdicts), "not_delivered": int(nd.sum()),
                     "dropped": int((~nd).sum()) - len(verdicts),
                     "judge_pass_rate": float(verdicts.sum()) / n if n else np.nan})
    return pd.DataFrame(rows)


def gap_table(prep: Prepared) -> pd.DataFrame:
    rows = []
    for a, b in itertools.combinations(prep.pairings, 2):
        ca, cb = (_scored(c, nd) for c, nd, _ in (_confusion(prep.of(a)), _confusion(prep.of(b))))
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
        s.skipped = needs_words(("judge_outcome",))
        return s
    if not present(prep.runs, "outcome"):
        s.intro = ("These runs were graded only by a judge: every pass/fail below is a model's verdict, not a "
                   "test's. " + _calibration_text(prep))
        s.tables.append(TableSpec("judge_only", "Judge's pass rate (a model's verdicts)", judge_only_table(prep)))
        found = [c for c in (prep.judge_calibrations.get(d) for d in _digests(prep)) if c is not None and c.figures]
        if found:
            s.tables.append(TableSpec("judge_calibration", "The calibration the verdicts rest on (the same judge "
                                      "against the tests, elsewhere in the ledger)",
                                      pd.DataFrame([c.row() for c in found]).replace({None: np.nan})))
        return s
    s.intro = ("Each run graded by the hidden tests (the reference) and by the judge. False pass: of the runs the "
               "tests failed, the share the judge passed; false fail: of those the tests passed, the share it "
               "failed. A run that delivered nothing (not_delivered) was judged by neither: it is left out of the "
               "agreement and counted, and it fails by both in the pass rates, as a pass/fail score counts a failed "
               "attempt. Kappa's 95% interval: Fleiss-Cohen-Everitt large-sample variance (as statsmodels). Score "
               "bias: the judge's pass rate minus the tests'; gap bias: how far the judge moves each paired gap.")
    s.tables.append(TableSpec("judge_agreement", "Agreement with the tests, per pairing", agreement_table(prep)))
    gaps = gap_table(prep)
    if not gaps.empty:
        s.tables.append(TableSpec("judge_gap_bias", "What the judge does to each paired gap", gaps))
    return s
