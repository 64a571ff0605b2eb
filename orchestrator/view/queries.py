"""The viewer's set-based reads: one SQL statement per page on a read-only connection, each bounded by the
page (LIMIT/OFFSET on an indexed order) or grouped inside SQLite, so no page loads every run of a study.

What a figure means is defined elsewhere and matched here (tests/view/test_queries.py checks the match on
a ledger): `pairing_results` is orchestrator/study/progress.py `study_results` (the study's final table)
and `pairing_states` its `study_status`, both over the latest attempt of each (task, pairing, repeat); a
verdict is orchestrator/ledger/audits.py `load` (the latest audit of each rule with the override made
against its rule version), read from the ledger's audit_verdicts table, which triggers keep equal to it;
a run is compliant as compliance/records.py `is_compliant` says.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from compliance.traces import REPORTED_ONLY
from orchestrator.study.status import STATE_BUCKETS

#: runs on one page of the run list
PAGE_SIZE = 50

#: the latest attempt of each (task, pairing, repeat) of study `:study`: its runs that no run retries. Only
#: Ledger.retry makes an attempt after the first (attempt + 1, `retry_of` the one before, once), so the run
#: nobody retries is the highest attempt, as study/status.py `latest_attempts` picks it. The retried ones come
#: from the partial index runs_retried (schema.py: only retried runs are in it), the study's runs from the
#: (study_id, status) index, in rowid order within a state, which keeps the per-run lookups below close to
#: the order of their keys (run ids begin with their creation time)
_LATEST = """latest AS (
    SELECT r.run_id, r.pairing, r.status, r.failure_class, r.meta_json FROM runs r WHERE r.study_id = :study
    AND r.run_id NOT IN (SELECT retry_of FROM runs WHERE retry_of IS NOT NULL))"""


def _compliant(run: str) -> str:
    """A run's `compliant` as SQL, for the run whose id is the expression `run`: NULL unaudited (no audit
    row), 1 compliant (every rule that decides compliance clear in force, and at least one such rule), 0
    flagged (audited and not compliant: `error` or `unanalysable` fails it as a flag does). Read from
    audit_verdicts (each (run, rule)'s verdict in force, kept by the ledger's triggers: schema.py), by its
    primary key (run_id, rule): one index range per run, whatever the number of audit rows behind it."""
    decides = f"v.rule NOT IN ({_reported_only()})"
    return f"""(SELECT CASE WHEN count(*) = 0 THEN NULL
        WHEN SUM({decides}) > 0 AND SUM({decides} AND v.verdict <> 'clear') = 0 THEN 1 ELSE 0 END
    FROM audit_verdicts v WHERE v.run_id = {run})"""


#: the number a run is ranked by: its holdout score in the task's metric (an AUC for a row written before
#: metrics had names), as ScoreResult reads it
_HOLDOUT = "CASE WHEN s.status = 'scored' THEN COALESCE(s.score, s.auc) END"


def _reported_only() -> str:
    return ", ".join(f"'{rule}'" for rule in sorted(REPORTED_ONLY))  # rule names are ours, never user text


@dataclass(frozen=True)
class StudyLine:
    study_id: str
    name: str
    created_at: float
    attempts: int
    states: dict[str, int]   # every attempt's state, counted


def studies(conn: sqlite3.Connection) -> list[StudyLine]:
    """Every study, newest first, with its attempts counted by state (the (study_id, status) index)."""
    rows = conn.execute(
        "SELECT s.study_id, s.name, s.created_at, r.status, count(r.run_id) AS n FROM studies s"
        " LEFT JOIN runs r ON r.study_id = s.study_id GROUP BY s.study_id, r.status"
        " ORDER BY s.created_at DESC, s.study_id").fetchall()
    heads: dict[str, sqlite3.Row] = {}
    states: dict[str, dict[str, int]] = defaultdict(dict)
    for row in rows:
        heads.setdefault(row["study_id"], row)
        if row["status"] is not None:
            states[row["study_id"]][row["status"]] = row["n"]
    return [StudyLine(h["study_id"], h["name"], h["created_at"], sum(states[k].values()), dict(states[k]))
            for k, h in heads.items()]


def pairing_states(conn: sqlite3.Connection, study_id: str) -> dict[str, dict[str, int]]:
    """`study_status`'s table: per pairing, the latest attempts counted in its five columns."""
    rows = conn.execute(f"WITH {_LATEST} SELECT pairing, status, count(*) AS n FROM latest GROUP BY pairing, status",
                        {"study": study_id}).fetchall()
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for row in rows:
        bucket = STATE_BUCKETS[row["status"]]
        out[row["pairing"]][bucket] = out[row["pairing"]].get(bucket, 0) + row["n"]
    return dict(sorted(out.items()))


#: the verdict filters of the run list, on a run's `compliant` (see `_compliant`), as orchestrator/run/record.py
#: has it: unaudited None, compliant True, flagged False
_COMPLIANCE = {"unaudited": "IS NULL", "compliant": "= 1", "flagged": "= 0"}


#: the holdout score's metric, as `ScoreResult` reads it (a row written before metrics had names is an AUC)
_METRIC = f"CASE WHEN {_HOLDOUT} IS NOT NULL THEN COALESCE(s.metric, 'auc') END"


def pairing_results(conn: sqlite3.Connection, study_id: str) -> dict[str, dict[str, Any]]:
    """`study_results` (the study's final table) in one statement: per pairing over the latest attempts,
    runs, scored, failed, flagged (not compliant), mean and best holdout score ("best" in the metric's
    direction; none for a pairing scored in two metrics), the metric, graded and passed, and the best run.
    One pass over the study's runs with a lookup per run in scores, outcomes and audit_verdicts, kept once
    (MATERIALIZED) for the sums and then the best runs: the smallest id scoring the highest and the lowest
    (no sort of the runs)."""
    from orchestrator.specs.tasktypes import metric_by_name

    sql = f"""WITH {_LATEST},
    per_run AS MATERIALIZED (
        SELECT l.run_id, l.pairing, l.status, {_HOLDOUT} AS holdout, {_METRIC} AS metric,
            {_compliant("l.run_id")} AS compliant,
            CASE WHEN o.passed IS NOT NULL OR (json_extract(l.meta_json, '$.task_kind') = 'tests'
                                               AND l.failure_class = 'agent') THEN 1 ELSE 0 END AS graded,
            COALESCE(o.passed, 0) AS passed
        FROM latest l LEFT JOIN scores s ON s.run_id = l.run_id AND s.dataset = 'holdout'
        LEFT JOIN outcomes o ON o.run_id = l.run_id),
    sums AS MATERIALIZED (
        SELECT pairing, count(*) AS runs, count(holdout) AS scored, SUM(status = 'failed') AS failed,
            COALESCE(SUM(compliant = 0), 0) AS flagged, AVG(holdout) AS mean_holdout, MAX(holdout) AS highest,
            MIN(holdout) AS lowest, COUNT(DISTINCT metric) AS metrics, MIN(metric) AS metric,
            SUM(graded) AS graded, SUM(passed) AS passed
        FROM per_run GROUP BY pairing),
    high AS (SELECT p.pairing, MIN(p.run_id) AS run_id FROM per_run p JOIN sums m ON m.pairing = p.pairing
             AND p.holdout = m.highest GROUP BY p.pairing),
    low AS (SELECT p.pairing, MIN(p.run_id) AS run_id FROM per_run p JOIN sums m ON m.pairing = p.pairing
            AND p.holdout = m.lowest GROUP BY p.pairing)
    SELECT sums.*, h.run_id AS highest_run, w.run_id AS lowest_run FROM sums
    LEFT JOIN high h ON h.pairing = sums.pairing LEFT JOIN low w ON w.pairing = sums.pairing
    ORDER BY sums.pairing"""
    out: dict[str, dict[str, Any]] = {}
    for row in conn.execute(sql, {"study": study_id}):
        mean, one_metric = row["mean_holdout"], row["metrics"] == 1
        metric = row["metric"] if one_metric else None
        lower = metric is not None and not metric_by_name(metric).higher_is_better
        best = (row["lowest"] if lower else row["highest"]) if row["metrics"] < 2 else None
        out[row["pairing"]] = {
            "runs": row["runs"], "scored": row["scored"], "failed": row["failed"], "flagged": row["flagged"],
            "mean_holdout": round(mean, 4) if mean is not None else None,
            "best_holdout": round(best, 4) if best is not None else None, "metric": metric,
            "graded": row["graded"], "passed": row["passed"],
            "best_run": (row["lowest_run"] if lower else row["highest_run"]) if row["metrics"] < 2 else None,
        }
    return out


#: the verdict filters of the run list: the run's `compliant` (see `_COMPLIANCE`)
VERDICTS: tuple[str, ...] = ("flagged", "compliant", "unaudited")
SORTS: dict[str, str] = {
    "created": "r.created_at, r.rowid",
    "score": f"{_HOLDOUT} IS NULL, {_HOLDOUT} DESC, r.rowid",   # best first, unscored last
    "-score": f"{_HOLDOUT} IS NULL, {_HOLDOUT}, r.rowid",       # worst first, unscored last
    "pairing": "r.pairing, r.task, r.repeat, r.attempt, r.rowid",
    "state": "r.status, r.rowid",
}


@dataclass(frozen=True)
class RunQuery:
    """One page of the run list: filters (None: any), an order from SORTS, a page number from 1."""

    study_id: str | None = None
    pairing: str | None = None
    state: str | None = None
    verdict: str | None = None
    sort: str = "created"
    page: int = 1


@dataclass(frozen=True)
class RunPage:
    run_ids: list[str]
    total: int            # runs matching the filters, on every page
    page: int             # the page shown (the one asked for, kept within 1..pages)
    pages: int


def run_page(conn: sqlite3.Connection, q: RunQuery, *, size: int = PAGE_SIZE) -> RunPage:
    """The ids of one page of runs (every attempt) that match `q`, in its order, and how many match."""
    if q.sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    if q.verdict is not None and q.verdict not in _COMPLIANCE:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}")
    where, args = [], []
    for column, value in (("r.study_id", q.study_id), ("r.pairing", q.pairing), ("r.status", q.state)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    joins = ""
    if q.verdict is not None:  # each run the other filters leave, by its audit_verdicts rows
        where.append(f"{_compliant('r.run_id')} {_COMPLIANCE[q.verdict]}")
    cond = f" WHERE {' AND '.join(where)}" if where else ""
    total = conn.execute(f"SELECT count(*) FROM runs r{cond}", args).fetchone()[0]
    pages = max(1, -(-total // size))
    page = min(max(1, q.page), pages)
    if "score" in q.sort:
        joins += " LEFT JOIN scores s ON s.run_id = r.run_id AND s.dataset = 'holdout'"
    rows = conn.execute(f"SELECT r.run_id FROM runs r{joins}{cond} ORDER BY {SORTS[q.sort]} LIMIT ? OFFSET ?",
                        [*args, size, (page - 1) * size]).fetchall()
    return RunPage([row[0] for row in rows], total, page, pages)


def pairings(conn: sqlite3.Connection, study_id: str | None) -> list[str]:
    """The pairings to filter by (of one study, or of every run)."""
    if study_id is None:
        return [r[0] for r in conn.execute("SELECT DISTINCT pairing FROM runs ORDER BY pairing")]
    return [r[0] for r in conn.execute("SELECT DISTINCT pairing FROM runs WHERE study_id = ? ORDER BY pairing",
                                       (study_id,))]


__all__ = ["PAGE_SIZE", "SORTS", "VERDICTS", "RunPage", "RunQuery", "StudyLine", "pairing_results",
           "pairing_states", "pairings", "run_page", "studies"]
