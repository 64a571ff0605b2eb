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
from datetime import datetime

from orchestrator.ledger import judge_verdicts, model_usage, outcomes, replays
from orchestrator.log import get_logger

log = get_logger(__name__)


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

# Published migrations 2 and 3, verbatim (they were owned by scoring/store.py and compliance/store.py).
_SCORES_V1 = """
CREATE TABLE IF NOT EXISTS scores (
    run_id           TEXT NOT NULL,
    dataset          TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('scored', 'unscorable')),
    reason           TEXT,
    detail           TEXT,
    auc              REAL,
    ap               REAL,
    auc_se           REAL,
    n                INTEGER,
    positives        INTEGER,
    seconds          REAL NOT NULL,
    cpu_seconds      REAL,
    train_seconds    REAL,
    predict_seconds  REAL,
    rows_checked     INTEGER,
    rows_changed     INTEGER,
    max_abs_change   REAL,
    tolerance        REAL,
    batch_dependent  INTEGER CHECK (batch_dependent IN (0, 1)),
    batch_rows       INTEGER,
    seed             INTEGER,
    artifact_sha256  TEXT,
    train_sha256     TEXT,
    image            TEXT,
    eval_score       REAL,
    scored_at        REAL NOT NULL,
    PRIMARY KEY (run_id, dataset),
    CHECK ((status = 'scored') = (auc IS NOT NULL)),
    CHECK ((status = 'unscorable') = (reason IS NOT NULL))
) STRICT;
"""

_AUDITS_V1 = """
CREATE TABLE IF NOT EXISTS audits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    rule TEXT NOT NULL,
    rule_version TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('flagged', 'clear', 'error')),
    evidence_json TEXT NOT NULL,
    notes_json TEXT NOT NULL DEFAULT '[]',
    file TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audits_run_rule ON audits (run_id, rule);
CREATE TABLE IF NOT EXISTS audit_overrides (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    rule TEXT NOT NULL,
    rule_version TEXT NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('flagged', 'clear')),
    reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_overrides_run_rule ON audit_overrides (run_id, rule);
"""

# Migration 4: the tables of migrations 2 and 3 follow the ledger's rules: foreign keys to runs, STRICT,
# unix-second timestamps. Rows of runs this ledger does not hold (written by an old `sbx rescore
# --artifacts` for arbitrary ids) cannot be kept under a foreign key; they are counted and dropped.
_SCORES_V2 = """
CREATE TABLE scores_v2 (
    run_id           TEXT NOT NULL REFERENCES runs(run_id),
    dataset          TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('scored', 'unscorable')),
    reason           TEXT,
    detail           TEXT,
    auc              REAL,
    ap               REAL,
    auc_se           REAL,
    n                INTEGER,
    positives        INTEGER,
    seconds          REAL NOT NULL,
    cpu_seconds      REAL,
    train_seconds    REAL,
    predict_seconds  REAL,
    rows_checked     INTEGER,
    rows_changed     INTEGER,
    max_abs_change   REAL,
    tolerance        REAL,
    batch_dependent  INTEGER CHECK (batch_dependent IN (0, 1)),
    batch_rows       INTEGER,
    seed             INTEGER,
    artifact_sha256  TEXT,
    train_sha256     TEXT,
    image            TEXT,
    eval_score       REAL,
    scored_at        REAL NOT NULL,
    PRIMARY KEY (run_id, dataset),
    CHECK ((status = 'scored') = (auc IS NOT NULL)),
    CHECK ((status = 'unscorable') = (reason IS NOT NULL))
) STRICT;
CREATE TABLE audits_v2 (
    id             INTEGER PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs(run_id),
    rule           TEXT NOT NULL,
    rule_version   TEXT NOT NULL,
    verdict        TEXT NOT NULL CHECK (verdict IN ('flagged', 'clear', 'error')),
    evidence_json  TEXT NOT NULL,
    notes_json     TEXT NOT NULL DEFAULT '[]',
    file           TEXT,
    created_at     REAL NOT NULL
) STRICT;
CREATE TABLE audit_overrides_v2 (
    id             INTEGER PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs(run_id),
    rule           TEXT NOT NULL,
    rule_version   TEXT NOT NULL,
    verdict        TEXT NOT NULL CHECK (verdict IN ('flagged', 'clear')),
    reason         TEXT NOT NULL CHECK (length(trim(reason)) > 0),
    created_at     REAL NOT NULL
) STRICT;
"""


def _unix(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def _strict_scores_and_audits(conn: sqlite3.Connection) -> None:
    for statement in [s for s in _SCORES_V2.split(";") if s.strip()]:
        conn.execute(statement)
    runs = "SELECT run_id FROM runs"
    cols = [r[1] for r in conn.execute("PRAGMA table_info(scores)")]
    listed = ", ".join(cols)
    conn.execute(f"INSERT INTO scores_v2 ({listed}) SELECT {listed} FROM scores WHERE run_id IN ({runs})")
    dropped = {"scores": conn.execute(f"SELECT count(*) FROM scores WHERE run_id NOT IN ({runs})").fetchone()[0]}
    for table, extra in (("audits", "evidence_json, notes_json, file"), ("audit_overrides", "reason")):
        rows = conn.execute(f"SELECT id, run_id, rule, rule_version, verdict, {extra}, created_at FROM {table}"
                            f" WHERE run_id IN ({runs}) ORDER BY id").fetchall()
        if rows:
            conn.executemany(
                f"INSERT INTO {table}_v2 (id, run_id, rule, rule_version, verdict, {extra}, created_at)"
                f" VALUES ({', '.join('?' * len(rows[0]))})",
                [(*tuple(r)[:-1], _unix(r[-1])) for r in rows],
            )
        dropped[table] = conn.execute(f"SELECT count(*) FROM {table} WHERE run_id NOT IN ({runs})").fetchone()[0]
    for table in ("scores", "audits", "audit_overrides"):
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"ALTER TABLE {table}_v2 RENAME TO {table}")
    conn.execute("CREATE INDEX audits_run_rule ON audits (run_id, rule)")
    conn.execute("CREATE INDEX audit_overrides_run_rule ON audit_overrides (run_id, rule)")
    if any(dropped.values()):
        log.warning("ledger.migrate_dropped_orphans", **dropped)


# Migration 6: divergence analyses (orchestrator/ledger/diverge.py). A study's definitions are filed before its
# runs, one row per version (a changed definition is a new version; the old ones stay); each analysis keeps
# the definitions version it used, whether they were filed before the first run started, the arms, the
# per-pair seed and config check, and the analysis itself.
_DIVERGE = """
CREATE TABLE diverge_definitions (
    study_id          TEXT NOT NULL REFERENCES studies(study_id),
    version           INTEGER NOT NULL CHECK (version >= 1),
    definitions_json  TEXT NOT NULL,
    sha256            TEXT NOT NULL CHECK (length(sha256) = 64),
    filed_at          REAL NOT NULL,
    PRIMARY KEY (study_id, version)
) STRICT;
CREATE TABLE diverge_analyses (
    id                   INTEGER PRIMARY KEY,
    study_id             TEXT NOT NULL REFERENCES studies(study_id),
    definitions_version  INTEGER,
    definitions_sha256   TEXT NOT NULL CHECK (length(definitions_sha256) = 64),
    preregistered        INTEGER NOT NULL CHECK (preregistered IN (0, 1)),
    arms_json            TEXT NOT NULL,
    pair_check_json      TEXT NOT NULL,
    analysis_json        TEXT NOT NULL,
    created_at           REAL NOT NULL,
    FOREIGN KEY (study_id, definitions_version) REFERENCES diverge_definitions(study_id, version),
    CHECK (definitions_version IS NOT NULL OR preregistered = 0)
) STRICT;
CREATE INDEX diverge_analyses_by_study ON diverge_analyses(study_id, created_at);
"""

# Migration 8 (issue 11): what a scoring records about its own integrity. `eval_score` becomes the AUC sbx
# computes from the scorer's predictions on the evaluation rows; what train.py printed moves to
# `eval_score_reported` (old rows only had that one, so it moves there and `eval_score` is cleared). The CPU
# limit of the scored code, the files withheld from the scorer, the batch check per context and the second
# check in a fresh container are new columns.
_SCORING_INTEGRITY = """
ALTER TABLE scores ADD COLUMN eval_score_reported REAL;
ALTER TABLE scores ADD COLUMN train_cpu_seconds REAL;
ALTER TABLE scores ADD COLUMN cpu_limit_s REAL;
ALTER TABLE scores ADD COLUMN withheld_count INTEGER;
ALTER TABLE scores ADD COLUMN withheld_json TEXT;
ALTER TABLE scores ADD COLUMN batch_contexts_json TEXT;
ALTER TABLE scores ADD COLUMN fresh_check TEXT;
UPDATE scores SET eval_score_reported = eval_score, eval_score = NULL;
"""

# Migration 9 (issue 20): the audit's `unanalysable` verdict (compliance/opaque.py: nothing found, but the
# data flow can pass where the trace cannot see). SQLite cannot change a CHECK: the table is rebuilt.
_AUDITS_V3 = """
CREATE TABLE audits_v3 (
    id             INTEGER PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs(run_id),
    rule           TEXT NOT NULL,
    rule_version   TEXT NOT NULL,
    verdict        TEXT NOT NULL CHECK (verdict IN ('flagged', 'clear', 'unanalysable', 'error')),
    evidence_json  TEXT NOT NULL,
    notes_json     TEXT NOT NULL DEFAULT '[]',
    file           TEXT,
    created_at     REAL NOT NULL
) STRICT;
INSERT INTO audits_v3 SELECT id, run_id, rule, rule_version, verdict, evidence_json, notes_json, file, created_at
    FROM audits;
DROP TABLE audits;
ALTER TABLE audits_v3 RENAME TO audits;
CREATE INDEX audits_run_rule ON audits (run_id, rule);
"""

# run ids are `r-yyyymmddHHMMSS-abcdef`; `find_run` also takes a prefix of the hex tail alone, so the tail
# gets an expression index (the expression must match fields.HEX_TAIL character for character)
_RUNS_BY_HEX_TAIL = "CREATE INDEX runs_by_hex_tail ON runs(substr(run_id, 18));"


# Migration scores_metric (issue 25; appended last: its number is its place at merge): the task's own
# metric beside the AUC columns (a regression's RMSE, ...). A scored row now needs a `score` or an `auc` (a
# regression has no AUC; a row exported by a node of an older sbx has no score); SQLite cannot change a
# CHECK, so the table is rebuilt with every column it has. Rows scored before are binary tasks scored by
# AUC: their metric is `auc`, with the AUC and its SE.
def _scores_metric(conn: sqlite3.Connection) -> None:
    info = conn.execute("PRAGMA table_info(scores)").fetchall()  # cid, name, type, notnull, default, pk
    old = [r[1] for r in info]
    cols = [f"{r[1]} {r[2]}{' NOT NULL' if r[3] else ''}"
            + (f" CHECK ({r[1]} IN (0, 1))" if r[1] == "batch_dependent" else "") for r in info]
    cols = [c.replace("run_id TEXT NOT NULL", "run_id TEXT NOT NULL REFERENCES runs(run_id)", 1)
            .replace("status TEXT NOT NULL", "status TEXT NOT NULL CHECK (status IN ('scored', 'unscorable'))", 1)
            for c in cols]
    conn.execute(f"""CREATE TABLE scores_v3 ({", ".join(cols)}, metric TEXT, score REAL, score_se REAL,
        PRIMARY KEY (run_id, dataset),
        CHECK ((status = 'scored') = (score IS NOT NULL OR auc IS NOT NULL)),
        CHECK ((status = 'unscorable') = (reason IS NOT NULL))) STRICT""")
    listed = ", ".join(old)
    conn.execute(f"INSERT INTO scores_v3 ({listed}, metric, score, score_se) SELECT {listed}, "
                 f"CASE WHEN status = 'scored' THEN 'auc' END, "
                 f"CASE WHEN status = 'scored' THEN auc END, "
                 f"CASE WHEN status = 'scored' THEN auc_se END FROM scores")
    conn.execute("DROP TABLE scores")
    conn.execute("ALTER TABLE scores_v3 RENAME TO scores")


# Migration audit_verdicts (issue 24; appended last: its number is its place at merge): the verdict in force
# of each (run, rule), so a study's compliance is one indexed read per run instead of a pass over its audit
# rows (a 100,000-run study's page in `sbx view` took 4.3 s). It is what audits.py `load` gives: the rule's
# latest audit (the highest id), its verdict replaced by the latest override made against its rule version.
# Triggers keep it on every insert, update and delete of either table, whoever writes (the ledger, a node's
# import, a hand edit), by recomputing the (run, rule) touched; the table is never written otherwise. A later
# migration that rebuilds audits or audit_overrides (DROP TABLE drops a table's triggers) must call
# `_audit_verdict_triggers` again.
_AUDIT_VERDICT_OF = """
DELETE FROM audit_verdicts WHERE run_id = {row}.run_id AND rule = {row}.rule;
INSERT INTO audit_verdicts (run_id, rule, verdict)
    SELECT a.run_id, a.rule, COALESCE((SELECT o.verdict FROM audit_overrides o WHERE o.run_id = a.run_id
        AND o.rule = a.rule AND o.rule_version = a.rule_version ORDER BY o.id DESC LIMIT 1), a.verdict)
    FROM audits a WHERE a.id = (SELECT MAX(id) FROM audits WHERE run_id = {row}.run_id AND rule = {row}.rule);"""


def _audit_verdict_triggers(conn: sqlite3.Connection) -> None:
    for table in ("audits", "audit_overrides"):
        for event, rows in (("INSERT", ("NEW",)), ("DELETE", ("OLD",)), ("UPDATE", ("OLD", "NEW"))):
            body = "".join(_AUDIT_VERDICT_OF.format(row=row) for row in rows)
            conn.execute(f"CREATE TRIGGER {table}_{event.lower()}_verdict AFTER {event} ON {table} "
                         f"BEGIN {body} END")


def _audit_verdicts(conn: sqlite3.Connection) -> None:
    conn.execute("""CREATE TABLE audit_verdicts (
        run_id  TEXT NOT NULL REFERENCES runs(run_id),
        rule    TEXT NOT NULL,
        verdict TEXT NOT NULL,
        PRIMARY KEY (run_id, rule)) STRICT, WITHOUT ROWID""")
    _audit_verdict_triggers(conn)
    conn.execute("""INSERT INTO audit_verdicts (run_id, rule, verdict)
        SELECT a.run_id, a.rule, COALESCE((SELECT o.verdict FROM audit_overrides o WHERE o.run_id = a.run_id
            AND o.rule = a.rule AND o.rule_version = a.rule_version ORDER BY o.id DESC LIMIT 1), a.verdict)
        FROM (SELECT MAX(id) AS id FROM audits GROUP BY run_id, rule) last JOIN audits a ON a.id = last.id""")


# Migration runs_retried (issue 24): the few runs that were retried, so a study's latest attempts are its runs
# minus these (`sbx view`'s queries) and Ledger.retry finds a retry by `retry_of` without a scan
_RUNS_RETRIED = "CREATE INDEX runs_retried ON runs(retry_of) WHERE retry_of IS NOT NULL;"


#: the schema, oldest first; append to extend (see the module docstring)
MIGRATIONS: tuple[Migration, ...] = (
    Migration("core", _CORE),  # studies, runs, events, experiments
    Migration("scores", _SCORES_V1),  # one row per (run, dataset)
    Migration("audits", _AUDITS_V1),  # audit records and reviewers' overrides
    Migration("strict_scores_audits", _strict_scores_and_audits),
    Migration("model_usage", model_usage.SCHEMA),  # per run: gateway-measured calls, tokens, cost; the CLI's report
    Migration("diverge", _DIVERGE),  # divergence definitions (versioned) and analyses
    Migration("outcomes", outcomes.SCHEMA),  # pass/fail outcomes of tests tasks: per run, per grading, per test
    Migration("scoring_integrity", _SCORING_INTEGRITY),  # sbx-computed eval score, CPU limit, withheld files
    Migration("audits_unanalysable", _AUDITS_V3),  # the audit's `unanalysable` verdict
    Migration("replays", replays.SCHEMA),  # issue 26: `sbx replay` rows, apart from the agent's usage
    Migration("judge_verdicts", judge_verdicts.SCHEMA),  # issue 26: a judge's verdict per run, its own cost
    Migration("judge_spec_digest", judge_verdicts.SPEC_DIGEST),  # which judge spec gave a verdict (calibration)
    Migration("runs_by_hex_tail", _RUNS_BY_HEX_TAIL),  # issue 23: `sbx show TAIL` by index, not by scan
    Migration("scores_metric", _scores_metric),  # issue 25: the task's metric, its value and SE
    Migration("audit_verdicts", _audit_verdicts),  # issue 24: each (run, rule)'s verdict in force, by triggers
    Migration("runs_retried", _RUNS_RETRIED),  # issue 24: the runs retried, a study's latest attempts without a scan
)
