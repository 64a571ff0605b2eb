"""The ledger: studies, runs (one row per attempt), events and experiments in one SQLite file.

Thread safety: one connection per Ledger, used under a lock, so the meter and the experiment service
may write from their own threads. Process safety: WAL, `busy_timeout`, and `BEGIN IMMEDIATE` for every
write; each process opens its own Ledger (a Ledger does not survive a fork).

Runs started outside a study (`sbx run`) belong to the implicit study `adhoc` (study_id and name both
"adhoc"), created on first use, so every run has a study and (study, task, pairing, repeat, attempt)
is unique for all of them.

What the columns mean to readers (stats, report, export):
- `counted` is true unless the attempt failed as `infra` or was cancelled; an analysis takes the counted
  rows in a final state (audited, or failed as agent/unscorable).
- a measurement that is None was not measured (never 0 by default); `experiments_counted` and
  `experiments_refused` are kept by `add_experiment` and always agree with the experiments table.
- every state change is also an event of kind `transition` ({from, to, failure_class?, reason?}).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from orchestrator import paths
from orchestrator.failures import AmbiguousRunId, InvalidLedgerWrite, LedgerError, RunNotFound
from orchestrator.ledger import db, transfer
from orchestrator.ledger.fields import HEX_AT, check_finite, check_measurements, dumps_object, new_id
from orchestrator.ledger.records import (
    EXPERIMENT_STATUSES,
    RUN_SELECT,
    EventRecord,
    ExperimentRecord,
    ExperimentStatus,
    RunRecord,
    StudyRecord,
)
from orchestrator.ledger.schema import MIGRATIONS, Migration
from orchestrator.ledger.state import ENDS_SANDBOX, FailureClass, RunState, transition
from orchestrator.log import get_logger

log = get_logger(__name__)

ADHOC = "adhoc"


def default_path() -> Path:
    return paths.sbx_home() / "ledger.sqlite"


class Ledger:
    """Open (and create or migrate) the ledger at `path`, default `$SBX_HOME/ledger.sqlite`."""

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        create: bool = True,
        busy_timeout_s: float = 30.0,
        migrations: Sequence[Migration] = MIGRATIONS,
    ) -> None:
        self.path = Path(path) if path is not None else default_path()
        if not self.path.exists():
            if not create:
                raise LedgerError(f"no ledger at {self.path}")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pid = os.getpid()
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = db.connect(self.path, busy_timeout_s=busy_timeout_s)
        try:
            db.migrate(self._conn, migrations)
        except BaseException:
            self.close()
            raise

    # --- plumbing -------------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, db.write_transaction(self._connection()) as conn:
            yield conn

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read snapshot; nested inside another transaction of this Ledger it joins that one."""
        with self._lock:
            conn = self._connection()
            if conn.in_transaction:
                yield conn
            else:
                with db.read_transaction(conn):
                    yield conn

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """The ledger's connection, held under its lock, for the stores of other parts (scores, audits)
        that run their own short transactions on the tables their migrations created."""
        with self._lock:
            yield self._connection()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise LedgerError(f"the ledger at {self.path} is closed")
        if os.getpid() != self._pid:
            raise LedgerError("a Ledger cannot be used across fork(); open a new one in the child process")
        return self._conn

    def schema_version(self) -> int:
        with self._read() as conn:
            return db.schema_version(conn)

    # --- studies --------------------------------------------------------------------------------------

    def create_study(self, name: str, spec: Mapping[str, Any] | None = None) -> str:
        """Record a new study; its name must be unused (a restarted driver finds it by name instead)."""
        if not name.strip():
            raise InvalidLedgerWrite("a study needs a name")
        if name == ADHOC:
            raise InvalidLedgerWrite(f"the study name {ADHOC!r} is reserved for runs outside a study")
        spec_json = dumps_object(spec or {}, "the study spec")
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM studies WHERE name = ?", (name,)).fetchone():
                raise InvalidLedgerWrite(f"a study named {name!r} already exists")
            study_id = new_id("s")
            conn.execute(
                "INSERT INTO studies (study_id, name, spec_json, created_at) VALUES (?, ?, ?, ?)",
                (study_id, name, spec_json, time.time()),
            )
        log.info("study.create", study_id=study_id, name=name)
        return study_id

    def get_study(self, study_id: str) -> StudyRecord | None:
        with self._read() as conn:
            row = conn.execute("SELECT * FROM studies WHERE study_id = ?", (study_id,)).fetchone()
        return StudyRecord.from_row(row) if row else None

    def get_study_by_name(self, name: str) -> StudyRecord | None:
        with self._read() as conn:
            row = conn.execute("SELECT * FROM studies WHERE name = ?", (name,)).fetchone()
        return StudyRecord.from_row(row) if row else None

    # --- runs -----------------------------------------------------------------------------------------

    def new_run(
        self,
        *,
        task: str,
        agent: str,
        budget_name: str,
        model: str | None = None,
        pairing: str | None = None,
        study_id: str | None = None,
        repeat: int | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> str:
        """Plan attempt 1 of a run and return its id (state `planned`).

        `pairing` defaults to `agent/model` (or `agent` without a model); `study_id` None puts the run in
        the `adhoc` study; `repeat` (1-based) defaults to the next free one for (study, task, pairing)."""
        pairing = pairing or (f"{agent}/{model}" if model else agent)
        if repeat is not None and (isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1):
            raise InvalidLedgerWrite(f"repeat is 1-based, got {repeat!r}")
        meta_json = dumps_object(meta or {}, "meta")
        with self._write() as conn:
            if study_id is None or study_id == ADHOC:
                study_id = ADHOC
                conn.execute(
                    "INSERT OR IGNORE INTO studies (study_id, name, spec_json, created_at) VALUES (?, ?, '{}', ?)",
                    (ADHOC, ADHOC, time.time()),
                )
            elif not conn.execute("SELECT 1 FROM studies WHERE study_id = ?", (study_id,)).fetchone():
                raise InvalidLedgerWrite(f"no study {study_id!r} in the ledger")
            if repeat is None:
                repeat = conn.execute(
                    "SELECT coalesce(max(repeat), 0) + 1 FROM runs WHERE study_id = ? AND task = ? AND pairing = ?",
                    (study_id, task, pairing),
                ).fetchone()[0]
            run_id = self._insert_run(
                conn,
                study_id=study_id,
                task=task,
                pairing=pairing,
                agent=agent,
                model=model,
                budget_name=budget_name,
                repeat=repeat,
                attempt=1,
                retry_of=None,
                meta_json=meta_json,
            )
        log.info("run.plan", run_id=run_id, study_id=study_id, pairing=pairing, repeat=repeat)
        return run_id

    def retry(self, run_id: str) -> str:
        """The next attempt of a run whose attempt failed as infra: a new `planned` row with attempt + 1.

        Idempotent: if that attempt exists already, its id is returned (a restarted driver does not
        duplicate it)."""
        with self._write() as conn:
            old = self._run_row(conn, run_id)
            if old["status"] != RunState.FAILED or old["failure_class"] != FailureClass.INFRA:
                raise InvalidLedgerWrite(
                    f"only an infra failure is retried; run {run_id} is {old['status']}"
                    + (f" ({old['failure_class']})" if old["failure_class"] else "")
                )
            existing = conn.execute("SELECT run_id FROM runs WHERE retry_of = ?", (run_id,)).fetchone()
            if existing:
                return str(existing["run_id"])
            new_id = self._insert_run(
                conn,
                **{
                    k: old[k]
                    for k in ("study_id", "task", "pairing", "agent", "model", "budget_name", "repeat")
                },
                attempt=old["attempt"] + 1,
                retry_of=run_id,
                meta_json=old["meta_json"],
            )
        log.info("run.retry", run_id=new_id, retry_of=run_id, attempt=old["attempt"] + 1)
        return new_id

    def _insert_run(self, conn: sqlite3.Connection, **values: Any) -> str:
        run_id = new_id("r")
        while conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone():
            run_id = new_id("r")
        values = {"run_id": run_id, "created_at": time.time(), **values}
        try:
            conn.execute(
                f"INSERT INTO runs ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                tuple(values.values()),
            )
        except sqlite3.IntegrityError as exc:
            key = ", ".join(f"{k} {values[k]}" for k in ("study_id", "task", "pairing", "repeat", "attempt"))
            raise InvalidLedgerWrite(f"cannot plan run ({key}): {exc}") from None
        return run_id

    def advance(
        self,
        run_id: str,
        to: RunState | str,
        *,
        failure_class: FailureClass | str | None = None,
        reason: str | None = None,
    ) -> RunRecord:
        """Move a run to state `to`: the only way a run's state changes (see ledger/state.py for the rules).

        Records a `transition` event in the same transaction and logs `run.transition`."""
        now = time.time()
        with self._lock, self._write() as conn:
            row = self._run_row(conn, run_id)
            move = transition(row["status"], to, failure_class=failure_class, reason=reason)
            update: dict[str, Any] = {"status": str(move.to_state)}
            if move.to_state is RunState.FAILED:
                update |= {"failure_class": str(move.failure_class), "failure_reason": move.reason}
            if move.counted is not None:
                update["counted"] = int(move.counted)
            if move.to_state is RunState.STARTING:
                update["started_at"] = now
            if move.to_state in ENDS_SANDBOX and row["ended_at"] is None:
                update["ended_at"] = now
            sets = ", ".join(f"{k} = ?" for k in update)
            cur = conn.execute(
                f"UPDATE runs SET {sets} WHERE run_id = ? AND status = ?",
                (*update.values(), run_id, row["status"]),
            )
            assert cur.rowcount == 1, "the write lock is held; the state cannot have changed"
            detail = {"from": str(move.from_state), "to": str(move.to_state)}
            if move.failure_class:
                detail["failure_class"] = str(move.failure_class)
            if move.reason:
                detail["reason"] = move.reason
            self._insert_event(conn, run_id, "transition", detail, now)
            record = self.get_run(run_id)
        log.info(
            "run.transition",
            run_id=run_id,
            from_state=str(move.from_state),
            to_state=str(move.to_state),
            **(
                {"failure_class": str(move.failure_class), "reason": move.reason}
                if move.failure_class
                else {}
            ),
        )
        return record

    def update_measurements(self, run_id: str, **fields: Any) -> None:
        """Record measurements of a run. Only the names in `fields.MEASUREMENTS` are accepted; None clears
        one. `resources` replaces the granted resources; `meta` is merged (shallow) into the run's meta.
        Allowed in every state but `audited` (final measurements may land after a run failed)."""
        check_measurements(fields)
        if not fields:
            return
        with self._write() as conn:
            row = self._run_row(conn, run_id)
            if row["status"] == RunState.AUDITED:
                raise InvalidLedgerWrite(f"run {run_id} is audited; its row is final")
            columns: dict[str, Any] = {}
            for name, value in fields.items():
                if name == "resources":
                    columns["resources_json"] = dumps_object(value or {}, "resources")
                elif name == "meta":
                    merged = json.loads(row["meta_json"]) | dict(value or {})
                    columns["meta_json"] = dumps_object(merged if value is not None else {}, "meta")
                else:
                    columns[name] = value
            sets = ", ".join(f"{k} = ?" for k in columns)
            conn.execute(f"UPDATE runs SET {sets} WHERE run_id = ?", (*columns.values(), run_id))

    def get_run(self, run_id: str) -> RunRecord:
        with self._read() as conn:
            row = conn.execute(f"{RUN_SELECT} WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in the ledger {self.path}")
        return RunRecord.from_row(row)

    def find_run(self, prefix: str) -> RunRecord:
        """The run whose id is `prefix`, or the one run whose id starts with it (the leading `r-` may be
        left out) or whose random hex tail starts with it. Unknown and ambiguous prefixes are errors."""
        prefix = prefix.strip()
        if not prefix:
            raise RunNotFound("no run id given")
        with self._read() as conn:
            exact = conn.execute(f"{RUN_SELECT} WHERE run_id = ?", (prefix,)).fetchone()
            rows = (
                [exact]
                if exact
                else conn.execute(
                    f"{RUN_SELECT} WHERE substr(run_id, 1, ?) = ? OR substr(run_id, 1, ?) = ?"
                    f" OR substr(run_id, {HEX_AT}, ?) = ? ORDER BY run_id LIMIT 11",
                    (len(prefix), prefix, len(prefix) + 2, f"r-{prefix}", len(prefix), prefix),
                ).fetchall()
            )
        if not rows:
            raise RunNotFound(f"no run {prefix!r} in the ledger {self.path}")
        if len(rows) > 1:
            shown = ", ".join(r["run_id"] for r in rows[:10]) + (", ..." if len(rows) > 10 else "")
            raise AmbiguousRunId(
                f"run id prefix {prefix!r} matches {'more than 10' if len(rows) > 10 else len(rows)} runs: {shown}"
            )
        return RunRecord.from_row(rows[0])

    def list_runs(self, study_id: str | None = None, status: RunState | str | None = None) -> list[RunRecord]:
        """Runs (every attempt), oldest first, optionally of one study and/or in one state."""
        where, args = [], []
        if study_id is not None:
            where.append("study_id = ?")
            args.append(study_id)
        if status is not None:
            where.append("status = ?")
            args.append(str(RunState(status)))
        sql = (
            RUN_SELECT
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + " ORDER BY runs.created_at, runs.rowid"
        )
        with self._read() as conn:
            return [RunRecord.from_row(row) for row in conn.execute(sql, args)]

    def _run_row(self, conn: sqlite3.Connection, run_id: str) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in the ledger {self.path}")
        return row

    # --- events and experiments -----------------------------------------------------------------------

    def add_event(
        self, run_id: str, kind: str, detail: Mapping[str, Any] | None = None, time: float | None = None
    ) -> int:
        """Record one event (refusal, kill, budget crossing, stop, ...) of a run; return its id."""
        if not kind:
            raise InvalidLedgerWrite("an event needs a kind")
        with self._write() as conn:
            self._run_row(conn, run_id)
            return self._insert_event(conn, run_id, kind, detail or {}, time)

    def _insert_event(
        self, conn: sqlite3.Connection, run_id: str, kind: str, detail: Mapping[str, Any], at: float | None
    ) -> int:
        cur = conn.execute(
            "INSERT INTO events (run_id, time, kind, detail_json) VALUES (?, ?, ?, ?)",
            (
                run_id,
                time.time() if at is None else float(at),
                kind,
                dumps_object(detail, f"the detail of event {kind!r}"),
            ),
        )
        return int(cur.lastrowid or 0)

    def events(self, run_id: str, kind: str | None = None) -> list[EventRecord]:
        """A run's events in time order (ties in the order recorded)."""
        sql = (
            "SELECT * FROM events WHERE run_id = ?" + (" AND kind = ?" if kind else "") + " ORDER BY time, id"
        )
        with self._read() as conn:
            return [EventRecord.from_row(r) for r in conn.execute(sql, (run_id, kind) if kind else (run_id,))]

    def add_experiment(
        self,
        run_id: str,
        *,
        status: ExperimentStatus,
        n: int | None = None,
        commit_sha: str | None = None,
        train_sha256: str | None = None,
        eval_score: float | None = None,
        seconds: float | None = None,
        cpu_seconds: float | None = None,
        started_at: float | None = None,
        note: str | None = None,
    ) -> ExperimentRecord:
        """Record one experiment request. Every status but `refused` is counted and gets the next number n
        (or the given one, which must be free); a refusal is recorded with n None. The run's
        experiments_counted / experiments_refused move in the same transaction."""
        if status not in EXPERIMENT_STATUSES:
            raise InvalidLedgerWrite(
                f"experiment status must be one of {', '.join(EXPERIMENT_STATUSES)}, got {status!r}"
            )
        counted = status != "refused"
        if not counted and n is not None:
            raise InvalidLedgerWrite("a refused experiment is not counted and has no number n")
        values = {
            "commit_sha": commit_sha,
            "train_sha256": train_sha256,
            "eval_score": eval_score,
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "started_at": started_at,
            "note": note,
        }
        for name in ("eval_score", "seconds", "cpu_seconds", "started_at"):
            check_finite(name, values[name])
        with self._write() as conn:
            self._run_row(conn, run_id)
            if counted and n is None:
                n = conn.execute(
                    "SELECT coalesce(max(n), 0) + 1 FROM experiments WHERE run_id = ?", (run_id,)
                ).fetchone()[0]
            row = {"run_id": run_id, "n": n, "status": status, "counted": int(counted), **values}
            try:
                conn.execute(
                    f"INSERT INTO experiments ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                    tuple(row.values()),
                )
            except sqlite3.IntegrityError as exc:
                raise InvalidLedgerWrite(f"cannot record experiment {n} of run {run_id}: {exc}") from None
            column = "experiments_counted" if counted else "experiments_refused"
            conn.execute(f"UPDATE runs SET {column} = {column} + 1 WHERE run_id = ?", (run_id,))
        return ExperimentRecord(run_id=run_id, n=n, status=status, counted=counted, **values)

    def experiments(self, run_id: str) -> list[ExperimentRecord]:
        """A run's experiment requests in the order recorded."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM experiments WHERE run_id = ? ORDER BY id", (run_id,)
            ).fetchall()
        return [ExperimentRecord.from_row(r) for r in rows]

    # --- the whole record -----------------------------------------------------------------------------

    def run_record_json(self, run_id: str) -> dict[str, Any]:
        """Everything the ledger knows about one attempt, as JSON-ready plain values: every run column
        (resources and meta as dicts), plus `events` [{time, kind, detail}] and `experiments` [...]."""
        with self._read():  # one snapshot for the three reads (the lock is re-entrant)
            record = self.get_run(run_id)
            events = self.events(run_id)
            experiments = self.experiments(run_id)
        out = record.to_json()
        out["events"] = [e.to_json() for e in events]
        out["experiments"] = [x.to_json() for x in experiments]
        return out

    # --- carrying one run between ledgers (fleet nodes; see ledger/transfer.py) -----------------------

    def export_run(self, run_id: str) -> dict[str, Any]:
        """One attempt's row, study, events, experiments, scores and audits, as JSON-ready values."""
        with self._read() as conn:
            return transfer.export_run(conn, run_id)

    def import_run(self, payload: Mapping[str, Any], *, base: RunState | str | None = None) -> str:
        """Take a run's records from another ledger in one transaction: insert a run this ledger lacks, or
        replace one whose status is still `base` (the state it had when it was sent). Returns the run id."""
        with self._write() as conn:
            run_id = transfer.import_run(conn, dict(payload), base)
            self._insert_event(conn, run_id, "imported", {"base": str(base) if base else None,
                                                          "status": payload["run"]["status"]}, None)
        log.info("run.import", run_id=run_id, base=str(base) if base else None, status=payload["run"]["status"])
        return run_id
