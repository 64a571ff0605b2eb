"""Judge verdicts in the ledger (issue 26): one row per (run, judge), apart from the agent's `model_usage`.

A judge's calls go through the gateway on a socket of their own (run id `<run>.judge.<name>`), so their
tokens and cost are the judge's, recorded here, never added to the agent's. `verdict` is 'pass', 'fail' or
NULL (the answer did not end in a line the parse rule reads: unparsed, never counted as a pass; or no
verdict was asked for). A counted run that delivered nothing (its agent failed: `failed/agent`) gets a row with
`outcome` 'not_delivered', no call and no cost: the judge grades what the tests grade, a delivery, and the
report counts such runs apart instead of dropping them (run/judge.py, report/judge.py).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from dataclasses import dataclass
from typing import Any

from orchestrator.ledger import study_reads
from orchestrator.ledger.fields import check_finite, clean_text
from orchestrator.ledger.parts import LedgerPart

SCHEMA = """
CREATE TABLE judge_verdicts (
    run_id             TEXT NOT NULL REFERENCES runs(run_id),
    judge              TEXT NOT NULL,
    endpoint           TEXT NOT NULL,
    model              TEXT NOT NULL,
    verdict            TEXT CHECK (verdict IN ('pass', 'fail')),
    outcome            TEXT NOT NULL,
    diff_bytes         INTEGER NOT NULL CHECK (diff_bytes >= 0),
    diff_cut           INTEGER NOT NULL CHECK (diff_cut IN (0, 1)),
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL,
    transcript_sha256  TEXT,
    created_at         REAL NOT NULL,
    PRIMARY KEY (run_id, judge)
) STRICT;
"""


@dataclass(frozen=True)
class JudgeVerdict:
    run_id: str
    judge: str
    endpoint: str
    model: str
    verdict: str | None
    outcome: str
    diff_bytes: int
    diff_cut: bool
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    transcript_sha256: str | None
    created_at: float
    #: JudgeSpec.digest(): which judge (endpoint, model, prompt, parse rule) gave it; the report's calibration
    #: of a judge-only study reads the verdicts of the same digest on runs the tests graded too
    spec_sha256: str | None = None


#: the outcome of a row whose run delivered nothing to judge (no call was made)
NOT_DELIVERED = "not_delivered"


def reason(v: JudgeVerdict) -> str:
    """Why the row has the verdict it has: 'pass' or 'fail', 'unparsed' (the call answered, the parse rule
    could not read it), 'not_delivered', or the call's failed outcome ('error', 'provider_error', ...)."""
    if v.verdict is not None:
        return v.verdict
    return "unparsed" if v.outcome == "ok" else v.outcome


#: the spec's digest, added by a later migration
SPEC_DIGEST = "ALTER TABLE judge_verdicts ADD COLUMN spec_sha256 TEXT;"

_COLS = ("run_id", "judge", "endpoint", "model", "verdict", "outcome", "diff_bytes", "diff_cut", "input_tokens",
         "output_tokens", "cost_usd", "transcript_sha256", "created_at", "spec_sha256")


def save(conn: sqlite3.Connection, v: JudgeVerdict) -> None:
    values = [getattr(v, c) for c in _COLS]
    values[_COLS.index("diff_cut")] = int(v.diff_cut)
    conn.execute(f"INSERT OR REPLACE INTO judge_verdicts ({', '.join(_COLS)}) VALUES ({', '.join('?' * len(_COLS))})",
                 values)


def load(conn: sqlite3.Connection, run_ids: list[str] | None = None) -> list[JudgeVerdict]:
    if run_ids is None:
        rows = conn.execute("SELECT * FROM judge_verdicts ORDER BY run_id, judge").fetchall()
    else:
        rows = []
        for i in range(0, len(run_ids), 500):  # under SQLite's bound on parameters
            chunk = run_ids[i:i + 500]
            rows += conn.execute(f"SELECT * FROM judge_verdicts WHERE run_id IN ({', '.join('?' * len(chunk))}) "
                                 "ORDER BY run_id, judge", chunk).fetchall()
    return [verdict_of(r) for r in rows]


def verdict_of(row: sqlite3.Row) -> JudgeVerdict:
    values: dict[str, Any] = {c: row[c] for c in _COLS}  # SQLite's values, in the columns' declared types
    values["diff_cut"] = bool(values["diff_cut"])  # stored as 0 or 1
    return JudgeVerdict(**values)


class JudgesPart(LedgerPart):
    """`ledger.judges`: judges' verdicts on runs, one per (run, judge), with the judge's own cost."""

    __slots__ = ()

    def save(self, verdict: JudgeVerdict) -> None:
        """Store (or replace) a judge's verdict on a run: its own row and cost, never the agent's usage."""
        check_finite("cost_usd", verdict.cost_usd)
        verdict = dataclasses.replace(verdict, judge=clean_text(verdict.judge, 80),
                                      model=clean_text(verdict.model, 200))
        with self._write() as conn:
            self._run_row(conn, verdict.run_id)
            save(conn, verdict)

    def of_runs(self, run_ids: list[str] | None = None) -> list[JudgeVerdict]:
        """Judges' verdicts, of `run_ids` or (None) of every run, by run and judge."""
        with self._read() as conn:
            return load(conn, run_ids)

    def names_by_run(self, study_id: str) -> dict[str, set[str]]:
        """run id -> the judges that gave it a verdict row, for one study's runs."""
        with self._read() as conn:
            return study_reads.names_by_run(conn, "judge_verdicts", "judge", study_id)
