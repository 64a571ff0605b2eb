"""Reading many runs back at once: one query per table for a whole study (or one run), in one read snapshot,
as plain SQL tuples keyed by run id (no per-row objects).

run/record.py turns these into the flat record's columns; `sbx export`, the end of `sbx study run`, the
report's frame and `sbx show` all read through here. Before issue 23 each run's row took 21 statements (14
read transactions), so a 100,000-run export spent its time in SQLite's per-statement overhead; then one
query per table still built ~10 Python objects a run (a RunRecord, ScoreResults, audit verdicts) before
the row, so the rows are now built column by column from the tuples themselves. A study costs a fixed
number of statements, each a range on an index (`runs_by_study_status`, then the run-keyed primary keys
and indexes of the other tables).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

#: the runs columns a run's row is built from, in this order in `StudyReads.runs`
RUN_COLUMNS = (
    "run_id", "study_id", "study_name", "task", "pairing", "agent", "model", "budget_name", "repeat", "attempt",
    "retry_of", "status", "failure_class", "failure_reason", "counted", "stop_reason", "created_at",
    "started_at", "ended_at", "wall_seconds", "cpu_seconds_metered", "cpu_seconds_container",
    "experiments_counted", "experiments_refused", "delivered_sha256", "commits", "image", "node", "slot",
    "container_id", "agent_exit_code", "artifact_manifest", "meta_json",
)
#: the holdout score's columns in `StudyReads.holdout`; metric, score and score_se as `ScoreResult` reads
#: them (a row scored before metrics had names is an AUC: its auc and auc_se)
HOLDOUT_COLUMNS = (
    "status", "reason", "detail", "ap", "n", "positives", "eval_score", "eval_score_reported", "cpu_seconds",
    "cpu_limit_s", "withheld_count", "fresh_check", "rows_checked", "rows_changed", "max_abs_change",
    "batch_dependent", "metric", "score", "score_se",
)
#: the model usage columns in `StudyReads.usage`
USAGE_COLUMNS = (
    "cost_usd", "input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens", "calls", "endpoint",
    "agent_version", "refused", "provider_errors", "cache_write_tokens", "self_report_json",
)
_AS_AUC = "status = 'scored' AND metric IS NULL AND auc IS NOT NULL"
_SCORE_SQL = {"metric": f"CASE WHEN {_AS_AUC} THEN 'auc' ELSE metric END",
              "score": f"CASE WHEN {_AS_AUC} THEN auc ELSE score END",
              "score_se": f"CASE WHEN {_AS_AUC} THEN auc_se ELSE score_se END"}


@dataclass(frozen=True)
class StudyReads:
    """What the flat rows of a study's runs are built from, each part as SQLite returned it."""

    #: one tuple per attempt (RUN_COLUMNS), oldest first
    runs: list[tuple[Any, ...]]
    #: run id -> its holdout score (HOLDOUT_COLUMNS)
    holdout: dict[str, tuple[Any, ...]]
    #: run id -> its later score's (score, ap)
    later: dict[str, tuple[Any, Any]]
    #: (run id, rule, rule version, verdict) of every audit, oldest first
    audits: list[tuple[str, str, str, str]]
    #: (run id, rule, rule version) -> the latest reviewer override's verdict
    overrides: dict[tuple[str, str, str], str]
    #: run id -> its model usage (USAGE_COLUMNS)
    usage: dict[str, tuple[Any, ...]]
    #: run id -> (passed, reason, agree, flaky_json, gradings, gradings passed) of a graded run
    graded: dict[str, tuple[Any, ...]]
    #: run id -> (verdict, outcome, cost_usd, spec_sha256) of its first judge (by judge name)
    judged: dict[str, tuple[Any, ...]]
    #: run id -> the eval score its last experiment on its delivered train.py printed, within [0, 1]
    delivered_eval: dict[str, float]


def read_study(conn: sqlite3.Connection, *, study_id: str | None = None, run_id: str | None = None) -> StudyReads:
    """The parts of every run of `study_id` (oldest first, as `Ledger.list_runs`), or of the one run `run_id`
    (no runs when there is none). Call inside a read transaction: the queries share its snapshot."""
    if (study_id is None) == (run_id is None):
        raise ValueError("read_study takes a study_id or a run_id")
    where, arg = ("runs.study_id = ?", study_id) if study_id is not None else ("runs.run_id = ?", run_id)
    scope = f"run_id IN (SELECT run_id FROM runs WHERE {where})"
    cur = conn.cursor()
    cur.row_factory = None  # plain tuples: a Row per row costs more than the rest of the read at 100k runs

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return cur.execute(sql.format(scope=scope), (arg,)).fetchall()

    runs = cur.execute(f"SELECT {', '.join('studies.name' if c == 'study_name' else f'runs.{c}' for c in RUN_COLUMNS)}"
                       f" FROM runs JOIN studies USING (study_id) WHERE {where}"
                       " ORDER BY runs.created_at, runs.rowid", (arg,)).fetchall()
    if not runs:
        return StudyReads([], {}, {}, [], {}, {}, {}, {}, {})
    holdout_sql = ", ".join(_SCORE_SQL.get(c, c) for c in HOLDOUT_COLUMNS)
    holdout = {r[0]: r[1:] for r in rows(
        f"SELECT run_id, {holdout_sql} FROM scores WHERE {{scope}} AND dataset = 'holdout'")}
    later = {r[0]: (r[1], r[2]) for r in rows(
        f"SELECT run_id, {_SCORE_SQL['score']}, ap FROM scores WHERE {{scope}} AND dataset = 'later'")}
    # the latest override of each (run, rule, rule version) wins
    overrides = {(r[0], r[1], r[2]): r[3] for r in rows(
        "SELECT run_id, rule, rule_version, verdict FROM audit_overrides WHERE {scope} ORDER BY id")}
    audits: list[Any] = rows("SELECT run_id, rule, rule_version, verdict FROM audits WHERE {scope} ORDER BY id")
    usage = {r[0]: r[1:] for r in rows(f"SELECT run_id, {', '.join(USAGE_COLUMNS)} FROM model_usage WHERE {{scope}}")}
    graded = {r[0]: r[1:] for r in rows(
        "SELECT o.run_id, o.passed, o.reason, o.agree, o.flaky_json, count(g.run_id), coalesce(sum(g.passed), 0)"
        " FROM outcomes o LEFT JOIN gradings g ON g.run_id = o.run_id WHERE o.{scope} GROUP BY o.run_id")}
    judged: dict[str, tuple[Any, ...]] = {}
    for r in rows("SELECT run_id, verdict, outcome, cost_usd, spec_sha256 FROM judge_verdicts WHERE {scope}"
                  " ORDER BY run_id, judge"):
        judged.setdefault(r[0], r[1:])
    # each run's last such experiment: with max(), SQLite takes the bare column from the row holding the max
    delivered = {r[0]: r[1] for r in rows(
        "SELECT e.run_id, e.eval_score, max(e.id) FROM experiments e JOIN runs r ON r.run_id = e.run_id"
        " WHERE e.{scope} AND e.train_sha256 IS r.delivered_sha256"
        " AND e.eval_score >= 0.0 AND e.eval_score <= 1.0 GROUP BY e.run_id")}
    return StudyReads(runs, holdout, later, audits, overrides, usage, graded, judged, delivered)


def names_by_run(conn: sqlite3.Connection, table: str, column: str, study_id: str) -> dict[str, set[str]]:
    """run id -> the values of `column` in `table` (a run-keyed table: scores' datasets, judge_verdicts'
    judges) for the runs of one study, in one query."""
    out: dict[str, set[str]] = {}
    for run_id, name in conn.execute(
            f"SELECT run_id, {column} FROM {table} WHERE run_id IN (SELECT run_id FROM runs WHERE study_id = ?)",
            (study_id,)):
        out.setdefault(run_id, set()).add(name)
    return out
