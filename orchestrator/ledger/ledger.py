"""The ledger: studies, runs (one row per attempt), events and experiments in one SQLite file.

Every other table is a part of the Ledger, reached as an attribute (`ledger.scores.save(run_id, result)`,
`ledger.audits.latest(run_id)`, ...): its SQL and its part live in its own module, and the part runs on
this Ledger's connection, lock and transactions (ledger/parts.py lists them). A new table adds a part, not
methods here.

Thread safety: one connection per Ledger, used under a lock, so the meter and the experiment service
may write from their own threads. Process safety: WAL, `busy_timeout`, and `BEGIN IMMEDIATE` for every
write; each process opens its own Ledger (a Ledger does not survive a fork).

Runs started outside a study (`sbx run`) belong to the implicit study `adhoc` (study_id and name both
"adhoc"), created on first use, so every run has a study and (study, task, pairing, repeat, attempt)
is unique for all of them.

What the columns mean to readers (stats, report, export):
- `counted` is true unless the attempt failed as `infra` or was cancelled; an analysis takes the counted
  rows in a final state (audited, or failed as agent/unscorable).
- a measurement that is None was not measured (never 0 by default); `experiments_counted` is kept by
  `add_experiment` and always agrees with the experiments table; `experiments_refused` counts the refused
  rows there plus the refusals counted in bulk (`add_refusals`, one `experiments_refused_in_bulk` event each).
- every string that may carry what an agent wrote (event details, meta, notes, reasons) is stored as valid
  UTF-8 without NUL, bounded in length and depth (`fields.clean_text`, `fields.clean_json`).
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

from orchestrator.failures import (
    AmbiguousRunId,
    InvalidLedgerWrite,
    LedgerError,
    LedgerUnavailable,
    RunNotFound,
)
from orchestrator.ledger import db, study_reads
from orchestrator.ledger.audits import AuditsPart
from orchestrator.ledger.diverge import DivergencePart
from orchestrator.ledger.fields import (
    HEX_TAIL,
    check_finite,
    check_measurements,
    clean_json,
    clean_text,
    dumps_detail,
    dumps_object,
    new_id,
    prefix_range,
)
from orchestrator.ledger.judge_verdicts import JudgesPart
from orchestrator.ledger.model_usage import UsagePart
from orchestrator.ledger.outcomes import OutcomesPart
from orchestrator.ledger.parts import part
from orchestrator.ledger.records import (
    EXPERIMENT_STATUSES,
    RUN_SELECT,
    AttemptState,
    EventRecord,
    ExperimentRecord,
    ExperimentStatus,
    RunRecord,
    StudyRecord,
)
from orchestrator.ledger.replays import ReplaysPart
from orchestrator.ledger.schema import MIGRATIONS, Migration
from orchestrator.ledger.scores import ScoresPart
from orchestrator.ledger.state import ENDS_SANDBOX, FailureClass, RunState, transition
from orchestrator.ledger.transfer import TransferPart
from orchestrator.log import get_logger

log = get_logger(__name__)

ADHOC = "adhoc"


class Ledger:
    """Open (and create or migrate) the ledger at `path` (a Home's `ledger_path`, or a file you name)."""

    def __init__(
        self,
        path: Path | str,
        *,
        create: bool = True,
        busy_timeout_s: float = 30.0,
        migrations: Sequence[Migration] = MIGRATIONS,
        read_only: bool = False,
    ) -> None:
        """`read_only`: open with SQLite's `mode=ro` (every write fails in SQLite itself); the ledger must
        exist and be at this sbx's schema, since a reader does not migrate."""
        self.path = Path(path)
        if not self.path.exists():
            if not create or read_only:
                raise LedgerUnavailable(f"no ledger at {self.path}")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._pid = os.getpid()
        self._lock = threading.RLock()
        self._batching = False
        connect = db.connect_read_only if read_only else db.connect
        self._conn: sqlite3.Connection | None = connect(self.path, busy_timeout_s=busy_timeout_s)
        try:
            if read_only:
                db.check_current(self._conn, migrations)
            else:
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
        with self._lock:
            if self._batching:  # inside `batch()`: this write joins its transaction, atomic as a savepoint
                conn = self._connection()
                conn.execute("SAVEPOINT ledger_write")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK TO ledger_write")
                    raise
                finally:
                    conn.execute("RELEASE ledger_write")
            else:
                with db.write_transaction(self._connection()) as conn:
                    yield conn

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Several write calls as one transaction: every write of this Ledger inside the block joins it, and
        all are committed together when the block ends, or none when it raises or the process dies (a
        study's fresh rows: one commit, where each row's own cost a study of 100,000 runs a minute before
        its first dispatch). Other threads' calls on this Ledger wait for the block; its reads see its
        writes."""
        with self._lock:
            if self._batching:
                yield
                return
            with db.write_transaction(self._connection()):
                self._batching = True
                try:
                    yield
                finally:
                    self._batching = False

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
        reason = clean_text(reason) if reason is not None else None  # reasons may quote what the agent wrote
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
                    columns["meta_json"] = dumps_object(clean_json(merged) if value is not None else {}, "meta")
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
            if exact:
                rows = [exact]
            else:
                # three range scans, each on an index (the primary key twice, the hex-tail index once),
                # never a scan of every run; up to 11 ids so the error can say "more than 10"
                found = {
                    row["run_id"]: row
                    for column, start in (("run_id", prefix), ("run_id", f"r-{prefix}"), (HEX_TAIL, prefix))
                    for row in self._starting_with(conn, column, start, limit=11)
                }
                rows = [found[run_id] for run_id in sorted(found)[:11]]
        if not rows:
            raise RunNotFound(f"no run {prefix!r} in the ledger {self.path}")
        if len(rows) > 1:
            shown = ", ".join(r["run_id"] for r in rows[:10]) + (", ..." if len(rows) > 10 else "")
            raise AmbiguousRunId(
                f"run id prefix {prefix!r} matches {'more than 10' if len(rows) > 10 else len(rows)} runs: {shown}"
            )
        return RunRecord.from_row(rows[0])

    @staticmethod
    def _starting_with(conn: sqlite3.Connection, column: str, prefix: str, *, limit: int) -> list[sqlite3.Row]:
        """Runs whose `column` (an indexed expression) starts with `prefix`, as a range on its index."""
        low, high = prefix_range(prefix)
        where = f"{column} >= ?" + (f" AND {column} < ?" if high is not None else "")
        args = (low, high) if high is not None else (low,)
        return conn.execute(f"{RUN_SELECT} WHERE {where} ORDER BY runs.run_id LIMIT {int(limit)}", args).fetchall()

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

    def attempt_states(self, study_id: str) -> list[AttemptState]:
        """Every attempt of one study, oldest first (as `list_runs`), with only its place and state."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT run_id, task, pairing, repeat, attempt, status, cpu_seconds_container FROM runs"
                " WHERE study_id = ? ORDER BY created_at, rowid", (study_id,)).fetchall()
        return [AttemptState(r[0], r[1], r[2], r[3], r[4], RunState(r[5]), r[6]) for r in rows]

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
                dumps_detail(detail, f"the detail of event {kind!r}"),
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
        values: dict[str, Any] = {  # the row's optional columns, also the record's fields
            "commit_sha": commit_sha,
            "train_sha256": train_sha256,
            "eval_score": eval_score,
            "seconds": seconds,
            "cpu_seconds": cpu_seconds,
            "started_at": started_at,
            "note": clean_text(note) if note is not None else None,  # the agent's own words
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

    def add_refusals(self, run_id: str, count: int, detail: Mapping[str, Any] | None = None) -> None:
        """Count `count` refused experiment requests that are not recorded one by one (past the number a run
        records singly, a flood of refusals only moves the counter): experiments_refused grows by `count`,
        and one `experiments_refused_in_bulk` event says how many and why."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidLedgerWrite(f"a refusal count is a non-negative int, got {count!r}")
        if count == 0:
            return
        with self._write() as conn:
            self._run_row(conn, run_id)
            conn.execute("UPDATE runs SET experiments_refused = experiments_refused + ? WHERE run_id = ?",
                         (count, run_id))
            self._insert_event(conn, run_id, "experiments_refused_in_bulk", {"count": count, **(detail or {})}, None)

    def experiments(self, run_id: str) -> list[ExperimentRecord]:
        """A run's experiment requests in the order recorded."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT * FROM experiments WHERE run_id = ? ORDER BY id", (run_id,)
            ).fetchall()
        return [ExperimentRecord.from_row(r) for r in rows]

    def run_reads(self, *, study_id: str | None = None, run_id: str | None = None) -> study_reads.StudyReads:
        """What the flat row of each run of a study (or of one run) is built from, in one snapshot: one query
        per table, never one per run (ledger/study_reads.py; issue 23)."""
        with self._read() as conn:
            return study_reads.read_study(conn, study_id=study_id, run_id=run_id)

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

    # --- the parts: every other table, reached as `ledger.<part>` (ledger/parts.py says what each holds) --

    scores = part(ScoresPart)
    audits = part(AuditsPart)
    usage = part(UsagePart)
    replays = part(ReplaysPart)
    judges = part(JudgesPart)
    outcomes = part(OutcomesPart)
    divergence = part(DivergencePart)
    transfer = part(TransferPart)
