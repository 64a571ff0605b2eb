"""Scores in the ledger: one row per (run, dataset), replaced when the pair is scored again.

`ScoreResult` is what one scoring of one artifact on one dataset found, good or bad: `scored` with its
metrics and the batch check, or `unscorable` with a reason. The scorer (orchestrator/scoring) produces
it; the ledger stores and returns it; nothing here imports the scorer.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, fields
from typing import Any

from orchestrator.ledger import study_reads
from orchestrator.ledger.parts import LedgerPart


@dataclass(frozen=True)
class ScoreResult:
    dataset: str
    status: str                      # scored | unscorable
    reason: str | None = None        # a key of scoring.REASONS when unscorable
    detail: str | None = None        # traceback's tail or what was wrong
    auc: float | None = None
    ap: float | None = None
    auc_se: float | None = None
    n: int | None = None
    positives: int | None = None
    seconds: float = 0.0             # the whole scoring, wall clock
    cpu_seconds: float | None = None  # CPU time of the scorer container (its cgroup), when readable
    train_seconds: float | None = None
    predict_seconds: float | None = None
    rows_checked: int | None = None
    rows_changed: int | None = None
    max_abs_change: float | None = None
    tolerance: float | None = None
    batch_dependent: bool | None = None
    batch_rows: int | None = None
    seed: int | None = None
    artifact_sha256: str | None = None
    train_sha256: str | None = None
    image: str | None = None
    #: the AUC sbx computed from the scorer's predictions on the evaluation rows (labels never sent)
    eval_score: float | None = None
    #: what train.py printed as its eval score when the scorer retrained it (the agent's claim; in [0, 1])
    eval_score_reported: float | None = None
    train_cpu_seconds: float | None = None   # CPU time of training alone (the first container)
    cpu_limit_s: float | None = None         # the CPU-seconds limit of training (one experiment's allowance)
    withheld_count: int | None = None        # files of the repo the scorer did not get (not code)
    withheld_json: str | None = None         # the first of them: [{"path", "bytes", "reason"}]
    batch_contexts_json: str | None = None   # the batch check per context, and the fresh container's
    fresh_check: str | None = None           # agreed | changed | inconclusive | failed: <reason>
    #: the task's metric (specs/tasktypes.py: auc, rmse, ...), its value and standard error. A binary task's
    #: auc, ap and auc_se are filled whatever its metric; `eval_score` is in the task's metric
    metric: str | None = None
    score: float | None = None
    score_se: float | None = None

    def __post_init__(self) -> None:
        # a result written as before `metric` existed (an AUC only) is an AUC-scored one
        if self.status == "scored" and self.metric is None and self.auc is not None:
            object.__setattr__(self, "metric", "auc")
            object.__setattr__(self, "score", self.auc)
            object.__setattr__(self, "score_se", self.auc_se)

    def to_json(self) -> dict[str, Any]:
        # every field is a scalar: no deep copy (asdict's cost every save_score paid, 100,000 times a study)
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScoreResult:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


_FIELDS = [f.name for f in fields(ScoreResult)]
COLUMNS = ["run_id", *_FIELDS, "scored_at"]


def save(conn: sqlite3.Connection, run_id: str, result: ScoreResult, scored_at: float) -> None:
    """Store (or replace) the score of `run_id` on `result.dataset`, inside the caller's transaction."""
    row: dict[str, Any] = {"run_id": run_id, **result.to_json(), "scored_at": scored_at}
    if row["batch_dependent"] is not None:
        row["batch_dependent"] = int(row["batch_dependent"])
    names = ", ".join(COLUMNS)
    marks = ", ".join(f":{c}" for c in COLUMNS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c not in ("run_id", "dataset"))
    conn.execute(f"INSERT INTO scores ({names}) VALUES ({marks}) "
                 f"ON CONFLICT (run_id, dataset) DO UPDATE SET {updates}", row)


def result_of(row: sqlite3.Row) -> ScoreResult:
    """A row of `scores` (every column of COLUMNS but run_id and scored_at) as a ScoreResult."""
    got = dict(zip(row.keys(), row, strict=True))  # by name once (a Row's lookup by name is slow at 100k rows)
    values = {c: got[c] for c in _FIELDS}
    if values["batch_dependent"] is not None:
        values["batch_dependent"] = bool(values["batch_dependent"])
    return ScoreResult(**values)


def load(conn: sqlite3.Connection, run_id: str) -> dict[str, ScoreResult]:
    """Every stored score of one run, by dataset."""
    rows = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM scores WHERE run_id = ? ORDER BY dataset", (run_id,))
    return {r.dataset: r for r in map(result_of, rows)}


def runs_with_score(conn: sqlite3.Connection, dataset: str) -> set[str]:
    """Runs with a stored score on `dataset` (`unscorable` included: the pair is finished)."""
    return {r[0] for r in conn.execute("SELECT run_id FROM scores WHERE dataset = ?", (dataset,))}


class ScoresPart(LedgerPart):
    """`ledger.scores`: the scores of runs, one per (run, dataset)."""

    __slots__ = ()

    def save(self, run_id: str, result: ScoreResult) -> None:
        """Store (or replace) the score of `run_id` on `result.dataset`."""
        with self._write() as conn:
            self._run_row(conn, run_id)
            save(conn, run_id, result, time.time())

    def of_run(self, run_id: str) -> dict[str, ScoreResult]:
        """Every stored score of one run, by dataset."""
        with self._read() as conn:
            return load(conn, run_id)

    def datasets_by_run(self, study_id: str) -> dict[str, set[str]]:
        """run id -> the datasets it has a stored score on (`unscorable` included), for one study's runs."""
        with self._read() as conn:
            return study_reads.names_by_run(conn, "scores", "dataset", study_id)

    def runs_scored_on(self, dataset: str) -> set[str]:
        """Runs with a stored score on `dataset` (`unscorable` included: the pair is finished)."""
        with self._read() as conn:
            return runs_with_score(conn, dataset)
