"""The ledger's schema, as an ordered list of migrations.

A migration's version is its position in `MIGRATIONS` (1-based); `schema_version` records each applied
one by version and name, and a ledger written by a different list (another branch took the same slot)
is refused by name instead of being silently skipped. To extend the schema, append one line:

    Migration("scores", '''CREATE TABLE scores (run_id TEXT NOT NULL REFERENCES runs(run_id), ...) STRICT;'''),

A migration is SQL (several statements are fine) or a function of the connection for data migrations.
All pending migrations run in one transaction with foreign keys deferred and checked before commit, so
a table rebuild (create new, copy, drop old, rename) is safe. Never edit or reorder a published one.

Conventions: tables are STRICT; times are unix seconds (REAL, UTC); dicts are JSON text in `*_json`
columns; booleans are INTEGER 0/1 with a CHECK.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    name: str
    #: SQL script, or a function that changes the schema through the connection (inside the transaction)
    apply: str | Callable[[sqlite3.Connection], None]


_CORE = """
CREATE TABLE studies (
    study_id    TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    spec_json   TEXT NOT NULL DEFAULT '{}',
    created_at  REAL NOT NULL
) STRICT;

-- one row per attempt: a run retried after an infra failure gets a new row with attempt + 1
CREATE TABLE runs (
    run_id                TEXT PRIMARY KEY,
    study_id              TEXT NOT NULL REFERENCES studies(study_id),
    task                  TEXT NOT NULL,
    pairing               TEXT NOT NULL,
    agent                 TEXT NOT NULL,
    model                 TEXT,
    budget_name           TEXT NOT NULL,
    repeat                INTEGER NOT NULL CHECK (repeat >= 1),
    attempt               INTEGER NOT NULL DEFAULT 1 CHECK (attempt >= 1),
    retry_of              TEXT REFERENCES runs(run_id),
    status                TEXT NOT NULL DEFAULT 'planned' CHECK (status IN
                              ('planned', 'starting', 'running', 'delivered', 'scored', 'audited',
                               'failed', 'cancelled')),
    failure_class         TEXT CHECK (failure_class IN ('infra', 'agent', 'unscorable')),
    failure_reason        TEXT,
    counted               INTEGER NOT NULL DEFAULT 1 CHECK (counted IN (0, 1)),
    stop_reason           TEXT,
    created_at            REAL NOT NULL,
    started_at            REAL,
    ended_at              REAL,
    wall_seconds          REAL,
    cpu_seconds_metered   REAL,
    cpu_seconds_container REAL,
    experiments_counted   INTEGER NOT NULL DEFAULT 0,
    experiments_refused   INTEGER NOT NULL DEFAULT 0,
    delivered_sha256      TEXT,
    commits               INTEGER,
    image                 TEXT,
    resources_json        TEXT NOT NULL DEFAULT '{}',
    node                  TEXT,
    slot                  INTEGER,
    container_id          TEXT,
    agent_exit_code       INTEGER,
    artifact_manifest     TEXT,
    meta_json             TEXT NOT NULL DEFAULT '{}',
    CHECK ((status = 'failed') = (failure_class IS NOT NULL)),
    CHECK ((status = 'failed') = (failure_reason IS NOT NULL)),
    CHECK (failure_class IS NOT 'infra' OR counted = 0),
    UNIQUE (study_id, task, pairing, repeat, attempt)
) STRICT;
CREATE INDEX runs_by_study_status ON runs(study_id, status);

-- refusals, kills, budget crossings, stops, and every state transition
CREATE TABLE events (
    id           INTEGER PRIMARY KEY,
    run_id       TEXT NOT NULL REFERENCES runs(run_id),
    time         REAL NOT NULL,
    kind         TEXT NOT NULL,
    detail_json  TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX events_by_run ON events(run_id, time);

-- every request to run an experiment: counted ones carry n = 1, 2, ...; refused ones have n NULL
CREATE TABLE experiments (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs(run_id),
    n             INTEGER CHECK (n >= 1),
    status        TEXT NOT NULL CHECK (status IN ('ok', 'crash', 'timeout', 'oom', 'refused')),
    counted       INTEGER NOT NULL CHECK (counted IN (0, 1)),
    commit_sha    TEXT,
    train_sha256  TEXT,
    eval_score    REAL,
    seconds       REAL,
    cpu_seconds   REAL,
    started_at    REAL,
    note          TEXT,
    CHECK ((counted = 1) = (n IS NOT NULL)),
    CHECK (status <> 'refused' OR counted = 0),
    UNIQUE (run_id, n)
) STRICT;
"""

#: the schema, oldest first; append to extend (see the module docstring)
def _owned(module: str) -> str:
    """A table set whose SQL lives with the part that owns it (scoring, compliance)."""
    import importlib

    return str(importlib.import_module(module).SCHEMA)


MIGRATIONS: tuple[Migration, ...] = (
    Migration("core", _CORE),  # studies, runs, events, experiments
    Migration("scores", _owned("orchestrator.scoring.store")),  # one row per (run, dataset)
    Migration("audits", _owned("compliance.store")),  # audit records and reviewers' overrides
)
