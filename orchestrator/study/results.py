"""The study's final table in SQL (`sbx study run` prints it, `sbx view`'s study page shows it): one statement
over the latest attempt of each (task, pairing, repeat), on any connection to the ledger, so neither loads a
study's runs into Python. The SQL pieces here (the latest attempts, a run's `compliant`, its holdout score)
are the viewer's too (orchestrator/view/queries.py). tests/view/test_queries.py checks the figures against
a Python oracle over each run's row (orchestrator/run/record.py `run_row`)."""

from __future__ import annotations

import sqlite3
from typing import Any

from orchestrator.compliance.traces import REPORTED_ONLY

#: the latest attempt of each (task, pairing, repeat) of study `:study`: its runs that no run retries. Only
#: Ledger.retry makes an attempt after the first (attempt + 1, `retry_of` the one before, once), so the run
#: nobody retries is the highest attempt, as study/status.py `latest_attempts` picks it. The retried ones come
#: from the partial index runs_retried (schema.py: only retried runs are in it), the study's runs from the
#: (study_id, status) index, in rowid order within a state, which keeps the per-run lookups below close to
#: the order of their keys (run ids begin with their creation time)
LATEST = """latest AS (
    SELECT r.run_id, r.pairing, r.status, r.failure_class, r.meta_json FROM runs r WHERE r.study_id = :study
    AND r.run_id NOT IN (SELECT retry_of FROM runs WHERE retry_of IS NOT NULL))"""


def compliant_sql(run: str) -> str:
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
HOLDOUT = "CASE WHEN s.status = 'scored' THEN COALESCE(s.score, s.auc) END"


def _reported_only() -> str:
    return ", ".join(f"'{rule}'" for rule in sorted(REPORTED_ONLY))  # rule names are ours, never user text


#: the verdict filters of the run list, on a run's `compliant` (see `compliant_sql`), as orchestrator/run/record.py
#: has it: unaudited None, compliant True, flagged False
COMPLIANCE = {"unaudited": "IS NULL", "compliant": "= 1", "flagged": "= 0"}


#: the holdout score's metric, as `ScoreResult` reads it (a row written before metrics had names is an AUC)
_METRIC = f"CASE WHEN {HOLDOUT} IS NOT NULL THEN COALESCE(s.metric, 'auc') END"


def pairing_results(conn: sqlite3.Connection, study_id: str) -> dict[str, dict[str, Any]]:
    """`study_results` (the study's final table) in one statement: per pairing over the latest attempts,
    runs, scored, failed, flagged (not compliant), mean and best holdout score ("best" in the metric's
    direction; none for a pairing scored in two metrics), the metric, graded and passed, and the best run.
    One pass over the study's runs with a lookup per run in scores, outcomes and audit_verdicts, kept once
    (MATERIALIZED) for the sums and then the best runs: the smallest id scoring the highest and the lowest
    (no sort of the runs)."""
    from orchestrator.specs.tasktypes import metric_by_name

    sql = f"""WITH {LATEST},
    per_run AS MATERIALIZED (
        SELECT l.run_id, l.pairing, l.status, {HOLDOUT} AS holdout, {_METRIC} AS metric,
            {compliant_sql("l.run_id")} AS compliant,
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


__all__ = ["COMPLIANCE", "HOLDOUT", "LATEST", "compliant_sql", "pairing_results"]
