"""Reading many runs back at once: one query per table for a whole study (or one run), joined in Python by
run id, in one read snapshot.

`run/record.py` builds a run's flat row from these parts; `sbx export`, the end of `sbx study run`, the
report's frame and `sbx show` all read through here. Before issue 23 each run's row took 21 statements (14
read transactions), so a 100,000-run export spent its time in SQLite's per-statement overhead; now a study
costs a fixed number of statements, each a range on an index (`runs_by_study_status`, then the run-keyed
primary keys and indexes of the other tables).
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from orchestrator.ledger import judge_verdicts, model_usage, scores
from orchestrator.ledger.judge_verdicts import JudgeVerdict
from orchestrator.ledger.model_usage import ModelUsage
from orchestrator.ledger.records import RUN_SELECT, RunRecord
from orchestrator.ledger.scores import ScoreResult

#: runs one query over the read's runs (its `{scope}` filled in)
_Rows = Callable[[str], list[sqlite3.Row]]


@dataclass(frozen=True)
class AuditVerdict:
    """One audit row without its evidence: the latest of a rule carries the reviewer's override in force on
    its rule version (`ledger/audits.py`: an override of an older version does not carry over)."""

    rule: str
    rule_version: str
    verdict: str
    override: str | None = None

    @property
    def final_verdict(self) -> str:
        return self.override if self.override is not None else self.verdict


@dataclass(frozen=True)
class GradedCounts:
    """What a run's row says of its grading (the whole `GradedOutcome` is `Ledger.outcome`)."""

    passed: bool
    reason: str
    repeats: int          # gradings that ran (at least 1), as `GradedOutcome.repeats`
    gradings_passed: int
    agree: bool
    flaky_tests: int


@dataclass(frozen=True)
class RunReads:
    """Everything a run's flat row is built from."""

    run: RunRecord
    scores: dict[str, ScoreResult]
    #: the latest audit of each rule, by rule name
    audits: tuple[AuditVerdict, ...]
    #: every audit of the run, oldest first (overrides not attached)
    history: tuple[AuditVerdict, ...]
    usage: ModelUsage | None
    graded: GradedCounts | None
    #: the first judge's verdict (by judge name)
    judged: JudgeVerdict | None
    #: the eval score the run's last experiment on its delivered train.py printed, within [0, 1]
    delivered_eval: float | None


def read_runs(conn: sqlite3.Connection, *, study_id: str | None = None, run_id: str | None = None) -> list[RunReads]:
    """The parts of every run of `study_id` (oldest first, as `Ledger.list_runs`), or of the one run `run_id`
    (an empty list when there is none). Call inside a read transaction: the queries share its snapshot."""
    if (study_id is None) == (run_id is None):
        raise ValueError("read_runs takes a study_id or a run_id")
    where, arg = ("runs.study_id = ?", study_id) if study_id is not None else ("runs.run_id = ?", run_id)
    scope = f"run_id IN (SELECT run_id FROM runs WHERE {where})"
    runs = [RunRecord.from_row(r) for r in conn.execute(
        f"{RUN_SELECT} WHERE {where} ORDER BY runs.created_at, runs.rowid", (arg,))]
    if not runs:
        return []

    def rows(sql: str) -> list[sqlite3.Row]:
        return conn.execute(sql.format(scope=scope), (arg,)).fetchall()

    by_score: dict[str, dict[str, ScoreResult]] = defaultdict(dict)
    for r in rows(f"SELECT {', '.join(scores.COLUMNS)} FROM scores WHERE {{scope}} ORDER BY run_id, dataset"):
        by_score[r["run_id"]][r["dataset"]] = scores.result_of(r)
    history, latest = _audits(rows)
    usage = {r["run_id"]: model_usage.usage_of(r) for r in rows(
        f"SELECT {', '.join(model_usage.COLUMNS)} FROM model_usage WHERE {{scope}}")}
    graded = _graded(rows)
    judged: dict[str, JudgeVerdict] = {}
    for r in rows("SELECT * FROM judge_verdicts WHERE {scope} ORDER BY run_id, judge"):
        judged.setdefault(r["run_id"], judge_verdicts.verdict_of(r))
    # each run's last such experiment: with max(), SQLite takes the bare column from the row holding the max
    delivered = {r[0]: r[1] for r in rows(
        "SELECT e.run_id, e.eval_score, max(e.id) FROM experiments e JOIN runs r ON r.run_id = e.run_id"
        " WHERE e.{scope} AND e.train_sha256 IS r.delivered_sha256"
        " AND e.eval_score >= 0.0 AND e.eval_score <= 1.0 GROUP BY e.run_id")}
    return [RunReads(run=run, scores=by_score.get(run.run_id, {}), audits=latest.get(run.run_id, ()),
                     history=history.get(run.run_id, ()), usage=usage.get(run.run_id),
                     graded=graded.get(run.run_id), judged=judged.get(run.run_id),
                     delivered_eval=delivered.get(run.run_id))
            for run in runs]


def _audits(rows: _Rows) -> tuple[dict[str, tuple[AuditVerdict, ...]], dict[str, tuple[AuditVerdict, ...]]]:
    """Per run: every audit oldest first, and the latest of each rule with its override (ledger/audits.py's
    `history` and `load`, without the evidence)."""
    # the latest override of each (run, rule, rule version) wins
    overrides = {(r[0], r[1], r[2]): r[3] for r in rows(
        "SELECT run_id, rule, rule_version, verdict FROM audit_overrides WHERE {scope} ORDER BY id")}
    history: dict[str, list[AuditVerdict]] = defaultdict(list)
    for r in rows("SELECT run_id, rule, rule_version, verdict FROM audits WHERE {scope} ORDER BY id"):
        history[r[0]].append(AuditVerdict(r[1], r[2], r[3]))
    latest: dict[str, tuple[AuditVerdict, ...]] = {}
    for run_id, records in history.items():
        last = {a.rule: a for a in records}  # in id order, so the latest of each rule stays
        latest[run_id] = tuple(
            AuditVerdict(a.rule, a.rule_version, a.verdict, overrides.get((run_id, a.rule, a.rule_version)))
            for _, a in sorted(last.items()))
    return {k: tuple(v) for k, v in history.items()}, latest


def _graded(rows: _Rows) -> dict[str, GradedCounts]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # run id -> [gradings, passed]
    for r in rows("SELECT run_id, passed FROM gradings WHERE {scope}"):
        counts[r[0]][0] += 1
        counts[r[0]][1] += r[1]
    out = {}
    for r in rows("SELECT run_id, passed, reason, agree, flaky_json FROM outcomes WHERE {scope}"):
        n, passed = counts.get(r[0], (0, 0))
        out[r[0]] = GradedCounts(passed=bool(r[1]), reason=r[2], repeats=max(1, n), gradings_passed=passed,
                                 agree=bool(r[3]), flaky_tests=len(json.loads(r[4])))
    return out


def names_by_run(conn: sqlite3.Connection, table: str, column: str, study_id: str) -> dict[str, set[str]]:
    """run id -> the values of `column` in `table` (a run-keyed table: scores' datasets, judge_verdicts'
    judges) for the runs of one study, in one query."""
    out: dict[str, set[str]] = {}
    for run_id, name in conn.execute(
            f"SELECT run_id, {column} FROM {table} WHERE run_id IN (SELECT run_id FROM runs WHERE study_id = ?)",
            (study_id,)):
        out.setdefault(run_id, set()).add(name)
    return out
