"""The SQLite file: pragmas, the recorded schema version, and migrations added later."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from orchestrator.failures import LedgerError
from orchestrator.ledger import MIGRATIONS, Ledger, Migration
from orchestrator.ledger.db import split_statements
from tests.ledger.ledger_helpers import plan

# A later migration as a test would add one: its own table name, so it cannot meet the real schema's.
SCORES = Migration(
    "test_scores",
    """
    CREATE TABLE test_scores (
        run_id  TEXT NOT NULL REFERENCES runs(run_id),
        dataset TEXT NOT NULL,
        auc     REAL,
        PRIMARY KEY (run_id, dataset)
    ) STRICT;
    CREATE TABLE migration_log (note TEXT) STRICT;
    INSERT INTO migration_log VALUES ('test_scores applied; once');
    """,
)


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def _versions(path: Path) -> list[tuple[int, str]]:
    conn = _raw(path)
    try:
        return [tuple(r) for r in conn.execute("SELECT version, name FROM schema_version ORDER BY version")]
    finally:
        conn.close()


def test_the_database_is_in_wal_mode_with_foreign_keys_and_a_busy_timeout(ledger: Ledger) -> None:
    conn = _raw(ledger.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent, seen by any reader
    finally:
        conn.close()
    own = ledger._connection()
    assert own.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert own.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000


def test_foreign_keys_are_enforced(ledger: Ledger) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        ledger._connection().execute("INSERT INTO events (run_id, time, kind) VALUES ('r-ghost', 0, 'x')")


def test_a_fresh_ledger_records_every_migration(ledger: Ledger) -> None:
    assert _versions(ledger.path) == [(i + 1, m.name) for i, m in enumerate(MIGRATIONS)]
    assert ledger.schema_version() == len(MIGRATIONS)


def test_the_schema_rejects_rows_the_api_would_never_write(ledger: Ledger) -> None:
    run_id = plan(ledger)
    conn = ledger._connection()
    bad = [
        "UPDATE runs SET status = 'finished' WHERE run_id = ?",
        "UPDATE runs SET status = 'failed' WHERE run_id = ?",  # failed without a class and reason
        "UPDATE runs SET counted = 2 WHERE run_id = ?",
        "UPDATE runs SET commits = 'many' WHERE run_id = ?",  # STRICT
    ]
    for sql in bad:
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute(sql, (run_id,))
    with pytest.raises(sqlite3.IntegrityError):  # a refused experiment cannot count
        conn.execute(
            "INSERT INTO experiments (run_id, n, status, counted) VALUES (?, 1, 'refused', 1)", (run_id,)
        )


def test_a_migration_added_later_applies_once_and_is_recorded(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    with Ledger(path) as led:
        run_id = plan(led)
    extended = (*MIGRATIONS, SCORES)
    with Ledger(path, migrations=extended) as led:
        assert led.schema_version() == len(MIGRATIONS) + 1
        led._connection().execute("INSERT INTO test_scores VALUES (?, 'holdout-2013', 0.71)", (run_id,))
        assert led.get_run(run_id).run_id == run_id  # old rows untouched
    with Ledger(path, migrations=extended) as led:  # reopened: nothing applied again
        conn = led._connection()
        assert conn.execute("SELECT count(*) FROM migration_log").fetchone()[0] == 1
        assert conn.execute("SELECT auc FROM test_scores").fetchone()[0] == 0.71
    assert _versions(path)[-1] == (len(MIGRATIONS) + 1, "test_scores")


def test_a_migration_can_be_a_function(tmp_path: Path) -> None:
    def add_column(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE runs ADD COLUMN gateway_url TEXT")

    with Ledger(tmp_path / "l.sqlite", migrations=(*MIGRATIONS, Migration("gateway url", add_column))) as led:
        columns = {r["name"] for r in led._connection().execute("PRAGMA table_info(runs)")}
        assert "gateway_url" in columns
        plan(led)  # the ledger still works with an extra column


def test_a_failing_migration_leaves_nothing_behind(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    Ledger(path).close()
    broken = Migration("broken", "CREATE TABLE half (x INTEGER); INSERT INTO no_such_table VALUES (1);")
    failed = rf"migration {len(MIGRATIONS) + 1} \(broken\) failed: no such table: no_such_table"
    with pytest.raises(LedgerError, match=failed):
        Ledger(path, migrations=(*MIGRATIONS, broken))
    assert _versions(path) == [(i + 1, m.name) for i, m in enumerate(MIGRATIONS)]
    conn = _raw(path)
    try:
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half'").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_migration_that_breaks_foreign_keys_is_rolled_back(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    with Ledger(path) as led:
        plan(led)
    orphan = Migration("orphan", "DELETE FROM studies;")
    with pytest.raises(LedgerError, match="broken foreign keys"):
        Ledger(path, migrations=(*MIGRATIONS, orphan))
    with Ledger(path) as led:
        assert len(led.list_runs()) == 1


def test_a_ledger_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    Ledger(path, migrations=(*MIGRATIONS, SCORES)).close()
    with pytest.raises(LedgerError, match="upgrade sbx"):
        Ledger(path)


def test_a_ledger_migrated_by_a_different_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite"
    Ledger(path, migrations=(*MIGRATIONS, SCORES)).close()
    other = Migration("test_audits", "CREATE TABLE test_audits (run_id TEXT) STRICT;")
    with pytest.raises(LedgerError, match="written by a different schema"):
        Ledger(path, migrations=(*MIGRATIONS, other))


def test_split_statements_keeps_semicolons_in_strings_comments_and_triggers() -> None:
    script = """
    -- a comment; with a semicolon
    CREATE TABLE t (x TEXT DEFAULT 'a;b');
    CREATE TRIGGER tr AFTER INSERT ON t BEGIN
        UPDATE t SET x = 'c;d' WHERE rowid = NEW.rowid;
    END;
    ;
    """
    statements = split_statements(script)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")
    with pytest.raises(LedgerError, match="incomplete SQL statement"):
        split_statements("CREATE TABLE t (x TEXT)")
