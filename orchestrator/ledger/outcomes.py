"""Pass/fail outcomes in the ledger: what the grading of a `tests` task's delivery decided.

Three tables (migration 7), each keyed by the run and replaced whole when a run is graded again:

    outcomes      one row per run: passed, reason (the verdict's reason, e.g. tests_failed, timeout),
                  detail, how many gradings ran (grade_repeats), whether they agreed, the flaky tests
    gradings      one row per (run, repeat): that grading's verdict, exit status, reward, seconds
    test_results  one row per (run, repeat, expected test): fail_to_pass / pass_to_pass and its outcome

A fail is an outcome like a pass (the run is `scored`); only our own failures leave a run ungraded. The
grader (orchestrator/tasks) produces the verdicts; run/evaluate_tests.py converts them to `GradedOutcome`;
nothing here imports the grader.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from orchestrator.failures import InvalidLedgerWrite
from orchestrator.ledger.fields import check_finite
from orchestrator.ledger.parts import LedgerPart

SCHEMA = """
CREATE TABLE outcomes (
    run_id      TEXT PRIMARY KEY REFERENCES runs(run_id),
    passed      INTEGER NOT NULL CHECK (passed IN (0, 1)),
    reason      TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    detail      TEXT NOT NULL DEFAULT '',
    repeats     INTEGER NOT NULL CHECK (repeats >= 1),
    agree       INTEGER NOT NULL CHECK (agree IN (0, 1)),
    flaky_json  TEXT NOT NULL DEFAULT '{}',
    tree_json   TEXT NOT NULL DEFAULT '{}',
    image       TEXT,
    seconds     REAL NOT NULL CHECK (seconds >= 0),
    graded_at   REAL NOT NULL
) STRICT;
CREATE TABLE gradings (
    run_id      TEXT NOT NULL REFERENCES runs(run_id),
    repeat      INTEGER NOT NULL CHECK (repeat >= 1),
    passed      INTEGER NOT NULL CHECK (passed IN (0, 1)),
    reason      TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    detail      TEXT NOT NULL DEFAULT '',
    exit_code   INTEGER,
    timed_out   INTEGER NOT NULL CHECK (timed_out IN (0, 1)),
    reward      REAL,
    seconds     REAL NOT NULL CHECK (seconds >= 0),
    PRIMARY KEY (run_id, repeat)
) STRICT;
CREATE TABLE test_results (
    run_id      TEXT NOT NULL REFERENCES runs(run_id),
    repeat      INTEGER NOT NULL CHECK (repeat >= 1),
    test_id     TEXT NOT NULL,
    expected    TEXT NOT NULL CHECK (expected IN ('fail_to_pass', 'pass_to_pass')),
    outcome     TEXT NOT NULL CHECK (outcome IN ('passed', 'failed', 'error', 'skipped', 'missing')),
    PRIMARY KEY (run_id, repeat, test_id)
) STRICT;
"""

#: tables holding one run's outcome rows (ledger/transfer.py carries them between ledgers)
TABLES = ("outcomes", "gradings", "test_results")


@dataclass(frozen=True)
class GradingRow:
    """One grading of a delivery (one of grade_repeats)."""

    repeat: int
    passed: bool
    reason: str
    detail: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    reward: float | None = None
    seconds: float = 0.0
    #: expected test id -> passed | failed | error | skipped | missing
    tests: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class GradedOutcome:
    """A run's pass/fail outcome over its gradings: passes iff every grading passed."""

    passed: bool
    reason: str                      # "passed", or the first failing grading's reason
    detail: str = ""
    agree: bool = True               # every grading gave the same verdict and per-test outcomes
    flaky: dict[str, dict[str, int]] = field(default_factory=dict)   # test id -> {outcome: count}
    tree: dict[str, Any] = field(default_factory=dict)               # what the grading tree skipped/restored
    image: str | None = None
    seconds: float = 0.0
    gradings: tuple[GradingRow, ...] = ()
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()

    @property
    def repeats(self) -> int:
        return max(1, len(self.gradings))

    def summary(self) -> dict[str, Any]:
        """The outcome without the per-test rows (for a run's record)."""
        out = asdict(self)
        out["repeats"] = self.repeats
        out["gradings"] = [{k: v for k, v in asdict(g).items() if k != "tests"} | _counts(g, self)
                           for g in self.gradings]
        out.pop("fail_to_pass")
        out.pop("pass_to_pass")
        return out


def _counts(g: GradingRow, o: GradedOutcome) -> dict[str, int]:
    return {"fail_to_pass_passed": sum(g.tests.get(t) == "passed" for t in o.fail_to_pass),
            "fail_to_pass": len(o.fail_to_pass),
            "pass_to_pass_passed": sum(g.tests.get(t) == "passed" for t in o.pass_to_pass),
            "pass_to_pass": len(o.pass_to_pass)}


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, allow_nan=False)


def save(conn: sqlite3.Connection, run_id: str, o: GradedOutcome, now: float) -> None:
    """Store (replace) a run's outcome, gradings and per-test results, inside the caller's transaction."""
    for table in TABLES:
        conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
    conn.execute(
        "INSERT INTO outcomes (run_id, passed, reason, detail, repeats, agree, flaky_json, tree_json, image, "
        "seconds, graded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (run_id, int(o.passed), o.reason, o.detail[:4000], o.repeats, int(o.agree), _dumps(o.flaky),
         _dumps(o.tree), o.image, float(o.seconds), now))
    expected = {t: "fail_to_pass" for t in o.fail_to_pass} | {t: "pass_to_pass" for t in o.pass_to_pass}
    for g in o.gradings:
        conn.execute(
            "INSERT INTO gradings (run_id, repeat, passed, reason, detail, exit_code, timed_out, reward, seconds) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, g.repeat, int(g.passed), g.reason, g.detail[:4000], g.exit_code, int(g.timed_out), g.reward,
             float(g.seconds)))
        conn.executemany(
            "INSERT INTO test_results (run_id, repeat, test_id, expected, outcome) VALUES (?, ?, ?, ?, ?)",
            [(run_id, g.repeat, t, expected[t], outcome) for t, outcome in g.tests.items() if t in expected])


def load(conn: sqlite3.Connection, run_id: str) -> GradedOutcome | None:
    """A run's stored outcome with its gradings and per-test results; None when it was never graded."""
    row = conn.execute("SELECT * FROM outcomes WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        return None
    tests: dict[int, dict[str, str]] = {}
    f2p: list[str] = []
    p2p: list[str] = []
    for r in conn.execute("SELECT repeat, test_id, expected, outcome FROM test_results WHERE run_id = ? "
                          "ORDER BY repeat, rowid", (run_id,)):
        tests.setdefault(r["repeat"], {})[r["test_id"]] = r["outcome"]
        if r["repeat"] == 1:
            (f2p if r["expected"] == "fail_to_pass" else p2p).append(r["test_id"])
    gradings = tuple(
        GradingRow(repeat=g["repeat"], passed=bool(g["passed"]), reason=g["reason"], detail=g["detail"],
                   exit_code=g["exit_code"], timed_out=bool(g["timed_out"]), reward=g["reward"],
                   seconds=g["seconds"], tests=tests.get(g["repeat"], {}))
        for g in conn.execute("SELECT * FROM gradings WHERE run_id = ? ORDER BY repeat", (run_id,)))
    return GradedOutcome(passed=bool(row["passed"]), reason=row["reason"], detail=row["detail"],
                      agree=bool(row["agree"]), flaky=json.loads(row["flaky_json"]), tree=json.loads(row["tree_json"]),
                      image=row["image"], seconds=row["seconds"], gradings=gradings, fail_to_pass=tuple(f2p),
                      pass_to_pass=tuple(p2p))


def passed_of(conn: sqlite3.Connection, run_ids: list[str]) -> dict[str, bool]:
    """run id -> passed, for the runs among `run_ids` that were graded."""
    out: dict[str, bool] = {}
    for start in range(0, len(run_ids), 500):
        chunk = run_ids[start:start + 500]
        marks = ", ".join("?" * len(chunk))
        for r in conn.execute(f"SELECT run_id, passed FROM outcomes WHERE run_id IN ({marks})", chunk):
            out[r["run_id"]] = bool(r["passed"])
    return out


class OutcomesPart(LedgerPart):
    """`ledger.outcomes`: the graded pass/fail outcomes of tests tasks' runs."""

    __slots__ = ()

    def save(self, run_id: str, outcome: GradedOutcome) -> None:
        """Store (or replace) a run's graded outcome: its verdict, every grading and every expected test."""
        check_finite("seconds", outcome.seconds)
        with self._write() as conn:
            self._run_row(conn, run_id)
            try:
                save(conn, run_id, outcome, time.time())
            except sqlite3.IntegrityError as exc:
                raise InvalidLedgerWrite(f"cannot store the outcome of {run_id}: {exc}") from None

    def of_run(self, run_id: str) -> GradedOutcome | None:
        """A run's graded outcome (with gradings and per-test results), or None when it was never graded."""
        with self._read() as conn:
            return load(conn, run_id)

    def passed(self, run_ids: Sequence[str]) -> dict[str, bool]:
        """run id -> passed, for the graded runs among `run_ids`."""
        with self._read() as conn:
            return passed_of(conn, list(run_ids))
