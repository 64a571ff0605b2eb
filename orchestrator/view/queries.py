"""The viewer's set-based reads: one SQL statement per page on a read-only connection, each bounded by the
page (LIMIT/OFFSET on an indexed order) or grouped inside SQLite, so no page loads every run of a study.

What a figure means is defined elsewhere and matched here (tests/view/test_queries.py checks the match on
a ledger): `pairing_results` is orchestrator/study/results.py's, the statement `study_results` (the
study's final table) runs, with the SQL pieces shared from there, and `pairing_states` is `study_status`, both over the latest attempt of each (task, pairing, repeat); a
verdict is orchestrator/ledger/audits.py `load` (the latest audit of each rule with the override made
against its rule version), read from the ledger's audit_verdicts table, which triggers keep equal to it;
a run is compliant as compliance/records.py `is_compliant` says.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass

from orchestrator.study.results import COMPLIANCE, HOLDOUT, LATEST, compliant_sql, pairing_results
from orchestrator.study.status import STATE_BUCKETS

#: runs on one page of the run list
PAGE_SIZE = 50

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
    rows = conn.execute(f"WITH {LATEST} SELECT pairing, status, count(*) AS n FROM latest GROUP BY pairing, status",
                        {"study": study_id}).fetchall()
    out: dict[str, dict[str, int]] = defaultdict(dict)
    for row in rows:
        bucket = STATE_BUCKETS[row["status"]]
        out[row["pairing"]][bucket] = out[row["pairing"]].get(bucket, 0) + row["n"]
    return dict(sorted(out.items()))


#: the verdict filters of the run list: the run's `compliant` (see `COMPLIANCE`)
VERDICTS: tuple[str, ...] = ("flagged", "compliant", "unaudited")
SORTS: dict[str, str] = {
    "created": "r.created_at, r.rowid",
    "score": f"{HOLDOUT} IS NULL, {HOLDOUT} DESC, r.rowid",   # best first, unscored last
    "-score": f"{HOLDOUT} IS NULL, {HOLDOUT}, r.rowid",       # worst first, unscored last
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
    if q.verdict is not None and q.verdict not in COMPLIANCE:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}")
    where, args = [], []
    for column, value in (("r.study_id", q.study_id), ("r.pairing", q.pairing), ("r.status", q.state)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    joins = ""
    if q.verdict is not None:  # each run the other filters leave, by its audit_verdicts rows
        where.append(f"{compliant_sql('r.run_id')} {COMPLIANCE[q.verdict]}")
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
