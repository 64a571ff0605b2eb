"""SQLite plumbing for the ledger: open a connection the way the ledger needs it, and migrate the schema.

Connections are in autocommit mode (`isolation_level=None`); every write is an explicit
`BEGIN IMMEDIATE ... COMMIT`, which takes the write lock up front so two processes never deadlock upgrading
a read lock, and waits up to `busy_timeout` for it. WAL lets readers run while one process writes.
`synchronous=NORMAL` is the usual WAL setting: the database never corrupts; a power cut may lose the
last commits, not a process crash.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from orchestrator.failures import LedgerBusy, LedgerError
from orchestrator.ledger.schema import Migration
from orchestrator.log import get_logger

log = get_logger(__name__)


def connect(path: Path, *, busy_timeout_s: float = 30.0) -> sqlite3.Connection:
    """A connection with WAL, foreign keys, a busy timeout, and rows addressable by column name.

    The connection may be used from any thread; the caller serialises its use (the Ledger holds a lock)."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_s)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode != "wal":
            log.warning("ledger.no_wal", path=str(path), journal_mode=mode)
        conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        conn.close()
        raise
    return conn


def connect_read_only(path: Path, *, busy_timeout_s: float = 30.0) -> sqlite3.Connection:
    """A connection that cannot write (SQLite's `mode=ro`): for readers that must never change the ledger,
    such as `sbx view`. It reads a WAL ledger while a study writes it; it sets no journal mode (that is a
    write) and migrates nothing."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=busy_timeout_s)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    return conn


def check_current(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> None:
    """Refuse, without writing, a database whose migrations are not exactly `migrations` (a reader cannot
    migrate it)."""
    recorded = _recorded(conn)
    if recorded != [m.name for m in migrations]:
        raise LedgerError(
            f"the ledger's schema ({len(recorded or [])} migrations) is not this sbx's ({len(migrations)}): "
            "any sbx command that writes (e.g. `sbx study status`) migrates an older one; a newer one needs "
            "a newer sbx"
        )


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception (a failed COMMIT included)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:  # still locked by another writer after busy_timeout
        raise LedgerBusy(f"could not lock the ledger for writing: {exc}") from exc
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


@contextmanager
def read_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One consistent snapshot for several SELECTs."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        conn.execute("COMMIT")


def split_statements(script: str) -> list[str]:
    """The statements of an SQL script, split where SQLite itself says a statement is complete
    (so `;` inside strings, comments and trigger bodies does not split)."""
    statements, buf = [], ""
    for char in script:
        buf += char
        if char == ";" and sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                statements.append(buf.strip())
            buf = ""
    if buf.strip() and not _only_comments(buf):
        raise LedgerError(f"incomplete SQL statement at the end of a migration: {buf.strip()[:80]!r}")
    return statements


def _only_comments(text: str) -> bool:
    lines = [line.strip() for line in text.splitlines()]
    return all(not line or line.startswith("--") for line in lines)


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> list[int]:
    """Apply the migrations this database has not seen, in order, in one transaction; return their versions.

    Refuses a database whose recorded migrations differ by name from `migrations`, or that is newer.
    An up-to-date database is only read, so opening one never waits for another process's writes."""
    if _recorded(conn) == [m.name for m in migrations]:
        return []
    with write_transaction(conn):
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL) STRICT"
        )
        applied = {
            row["version"]: row["name"] for row in conn.execute("SELECT version, name FROM schema_version")
        }
        if applied and max(applied) > len(migrations):
            raise LedgerError(
                f"the ledger has schema version {max(applied)} but this sbx knows only {len(migrations)}; "
                "upgrade sbx"
            )
        for version, name in sorted(applied.items()):
            if migrations[version - 1].name != name:
                raise LedgerError(
                    f"ledger schema version {version} is {name!r} but this sbx calls it "
                    f"{migrations[version - 1].name!r}; the ledger was written by a different schema"
                )
        pending = [v for v in range(1, len(migrations) + 1) if v not in applied]
        if not pending:
            return []
        conn.execute("PRAGMA defer_foreign_keys = ON")
        for version in pending:
            migration = migrations[version - 1]
            try:
                if isinstance(migration.apply, str):
                    for statement in split_statements(migration.apply):
                        conn.execute(statement)
                else:
                    migration.apply(conn)
            except sqlite3.Error as exc:
                raise LedgerError(f"ledger migration {version} ({migration.name}) failed: {exc}") from exc
            conn.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (version, migration.name, time.time()),
            )
            log.info("ledger.migrate", version=version, name=migration.name)
        broken = conn.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise LedgerError(
                f"migration left {len(broken)} rows with broken foreign keys, first: {tuple(broken[0])}"
            )
    return pending


def _recorded(conn: sqlite3.Connection) -> list[str] | None:
    """The names of the applied migrations in version order, or None before the first one."""
    with read_transaction(conn):
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_version'").fetchone():
            return None
        return [row[0] for row in conn.execute("SELECT name FROM schema_version ORDER BY version")]


def schema_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)
