"""One run's records carried between ledgers: a fleet node works on its own temporary ledger, and the
driver (which alone writes the study's ledger) takes the node's final state back.

    driver: sent = ledger.transfer.export_run(run_id)             the planned row (and its study)
    node:   node_ledger.transfer.import_run(sent)                 same run id; the node runs it
    node:   back = node_ledger.transfer.export_run(run_id)        row, events, experiments, scores, audits
    driver: ledger.transfer.import_run(back, base=sent_status)    replaces the row, in one transaction

The payload is plain JSON-ready values. Importing over an existing row is allowed only while that row is
still in the state the sender started from (`base`): a row that moved meanwhile (another driver, a
resumed study) is never overwritten. The state machine stays honest: the payload's `transition` events
must form a legal path (ledger/state.py) from `planned` through `base` to the payload's status, and its
`counted` must be what that path implies. The run's identity (study, task, pairing, repeat, attempt, ...)
must match; `retry_of` stays the receiver's (a node's ledger never holds the earlier attempt).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from orchestrator.failures import InvalidLedgerWrite
from orchestrator.ledger.parts import LedgerPart
from orchestrator.ledger.state import FailureClass, RunState, transition
from orchestrator.log import get_logger

log = get_logger(__name__)

FORMAT = 1
#: tables holding rows of one run (keyed by run_id), copied whole; their own integer ids are not kept
TABLES = ("events", "experiments", "scores", "audits", "audit_overrides", "model_usage", "outcomes", "gradings",
          "test_results")
#: columns that say which run this is; they must agree between sender and receiver
IDENTITY = ("run_id", "study_id", "task", "pairing", "agent", "model", "budget_name", "repeat", "attempt",
            "created_at")


def _columns(conn: sqlite3.Connection, table: str) -> tuple[list[str], str | None]:
    """A table's columns and its integer row-id column (not carried), if it has one."""
    info = conn.execute(f"PRAGMA table_info({table})").fetchall()
    rowid = next((r["name"] for r in info if r["pk"] == 1 and r["type"].upper() == "INTEGER"), None)
    return [r["name"] for r in info], rowid


def _has_table(conn: sqlite3.Connection, table: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None


def export_run(conn: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    """Everything one ledger holds about one attempt, inside the caller's read transaction."""
    row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if row is None:
        raise InvalidLedgerWrite(f"no run {run_id!r} to export")
    study = conn.execute("SELECT * FROM studies WHERE study_id = ?", (row["study_id"],)).fetchone()
    tables: dict[str, list[dict[str, Any]]] = {}
    for table in TABLES:
        if not _has_table(conn, table):
            continue
        columns, rowid = _columns(conn, table)
        kept = [c for c in columns if c != rowid]
        order = rowid or "rowid"
        rows = conn.execute(f"SELECT {', '.join(kept)} FROM {table} WHERE run_id = ? ORDER BY {order}", (run_id,))
        tables[table] = [dict(r) for r in rows]
    return {"format": FORMAT, "study": dict(study), "run": dict(row), "tables": tables}


def check_path(payload: dict[str, Any], base: RunState | None) -> None:
    """The payload's transitions must be a legal path from planned (through `base`) to its status."""
    run = payload["run"]
    moves = [json.loads(e["detail_json"]) for e in payload["tables"].get("events", []) if e["kind"] == "transition"]
    state = RunState.PLANNED
    seen = {state}
    counted = True
    for move in moves:
        if move.get("from") != state:
            raise InvalidLedgerWrite(f"run {run['run_id']}: transition from {move.get('from')} but the run was {state}")
        step = transition(state, move.get("to", ""), failure_class=move.get("failure_class"), reason=move.get("reason"))
        state = step.to_state
        seen.add(state)
        if step.counted is not None:
            counted = step.counted
    if state != run["status"]:
        raise InvalidLedgerWrite(f"run {run['run_id']}: its transitions end at {state} but its status is {run['status']}")
    if base is not None and base not in seen:
        raise InvalidLedgerWrite(f"run {run['run_id']}: its transitions never pass through {base}")
    if bool(run["counted"]) != counted:
        raise InvalidLedgerWrite(f"run {run['run_id']}: counted = {run['counted']} but its transitions imply {int(counted)}")
    if run["status"] == RunState.FAILED and run["failure_class"] == FailureClass.INFRA and run["counted"]:
        raise InvalidLedgerWrite(f"run {run['run_id']}: an infra failure is never counted")


def import_run(conn: sqlite3.Connection, payload: dict[str, Any], base: RunState | str | None) -> str:
    """Write `payload` (from `export_run`) into this ledger, inside the caller's write transaction.

    A run this ledger lacks is inserted (with its study when missing). A run it has is replaced only if its
    status is still `base`; its rows in TABLES are replaced by the payload's. Returns the run id."""
    if payload.get("format") != FORMAT:
        raise InvalidLedgerWrite(f"run payload format {payload.get('format')!r}; this sbx reads {FORMAT}")
    run = dict(payload["run"])
    run_id = run["run_id"]
    base = RunState(base) if base is not None else None
    check_path(payload, base)
    study = payload["study"]
    have_study = conn.execute("SELECT name FROM studies WHERE study_id = ?", (study["study_id"],)).fetchone()
    if have_study is None:
        conn.execute("INSERT INTO studies (study_id, name, spec_json, created_at) VALUES (?, ?, ?, ?)",
                     (study["study_id"], study["name"], study["spec_json"], study["created_at"]))
    elif have_study["name"] != study["name"]:
        raise InvalidLedgerWrite(f"study {study['study_id']} is {have_study['name']!r} here, {study['name']!r} in the payload")
    columns, _ = _columns(conn, "runs")
    unknown = set(run) - set(columns)
    if unknown:
        raise InvalidLedgerWrite(f"run payload has columns this ledger lacks: {', '.join(sorted(unknown))}")
    existing = conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    if existing is None:
        if run.get("retry_of") and not conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run["retry_of"],)).fetchone():
            run["retry_of"] = None  # the earlier attempt lives only in the sender's ledger
        conn.execute(f"INSERT INTO runs ({', '.join(run)}) VALUES ({', '.join('?' * len(run))})", tuple(run.values()))
    else:
        if base is None:
            raise InvalidLedgerWrite(f"run {run_id} exists here; importing over it needs the state it was sent in")
        if existing["status"] != base:
            raise InvalidLedgerWrite(f"run {run_id} is {existing['status']} here, not {base} as when it was sent; "
                                     "its records were not taken")
        differ = [c for c in IDENTITY if c in run and existing[c] != run[c]]
        if differ:
            raise InvalidLedgerWrite(f"run {run_id}: the payload is another run ({', '.join(differ)} differ)")
        update = {k: v for k, v in run.items() if k not in IDENTITY and k != "retry_of"}
        sets = ", ".join(f"{k} = ?" for k in update)
        cur = conn.execute(f"UPDATE runs SET {sets} WHERE run_id = ? AND status = ?", (*update.values(), run_id, str(base)))
        assert cur.rowcount == 1, "the write lock is held; the row cannot have changed"
    for table, rows in payload["tables"].items():
        if table not in TABLES:
            raise InvalidLedgerWrite(f"run payload has rows of table {table!r}, which is not carried")
        if not _has_table(conn, table):
            if rows:
                raise InvalidLedgerWrite(f"this ledger has no table {table!r} for the payload's rows")
            continue
        allowed, rowid = _columns(conn, table)
        conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        for row in rows:
            if row.get("run_id") != run_id or set(row) - set(allowed) or (rowid and rowid in row):
                raise InvalidLedgerWrite(f"a {table} row of the payload does not fit this ledger or this run")
            conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                         tuple(row.values()))
    return run_id


class TransferPart(LedgerPart):
    """`ledger.transfer`: one run's records carried to and from another ledger (see the module docstring)."""

    __slots__ = ()

    def export_run(self, run_id: str) -> dict[str, Any]:
        """One attempt's row, study, events, experiments, scores and audits, as JSON-ready values."""
        with self._read() as conn:
            return export_run(conn, run_id)

    def import_run(self, payload: Mapping[str, Any], *, base: RunState | str | None = None) -> str:
        """Take a run's records from another ledger in one transaction: insert a run this ledger lacks, or
        replace one whose status is still `base` (the state it had when it was sent). Returns the run id."""
        with self._write() as conn:
            run_id = import_run(conn, dict(payload), base)
            self._insert_event(conn, run_id, "imported", {"base": str(base) if base else None,
                                                         "status": payload["run"]["status"]})
        log.info("run.import", run_id=run_id, base=str(base) if base else None, status=payload["run"]["status"])
        return run_id
