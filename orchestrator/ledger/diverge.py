"""Divergence analyses in the ledger: definitions filed with a study, and the analyses made under them.

    diverge_definitions  study_id, version, definitions_json, sha256, filed_at      (one row per version)
    diverge_analyses     id, study_id, definitions_version, definitions_sha256, preregistered,
                         arms_json, pair_check_json, analysis_json, created_at

Definitions are filed as a JSON object (orchestrator/specs/diverge.py validates them before they get
here). Filing the same content as the latest version is a no-op that returns it; anything else becomes
the next version, and every earlier one is kept, so what was declared before the runs stays on record.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orchestrator.failures import InvalidLedgerWrite
from orchestrator.ledger.fields import dumps_object
from orchestrator.ledger.parts import LedgerPart
from orchestrator.log import get_logger

log = get_logger(__name__)


def definitions_sha256(definitions: Mapping[str, Any]) -> str:
    """The content hash of a definitions object: sha256 of its canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(dict(definitions), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class FiledDefinitions:
    study_id: str
    version: int
    definitions: dict[str, Any]
    sha256: str
    #: unix seconds
    filed_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> FiledDefinitions:
        return cls(
            row["study_id"],
            row["version"],
            json.loads(row["definitions_json"]),
            row["sha256"],
            row["filed_at"],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "study_id": self.study_id,
            "version": self.version,
            "sha256": self.sha256,
            "filed_at": self.filed_at,
            "definitions": self.definitions,
        }


@dataclass(frozen=True)
class StoredAnalysis:
    id: int
    study_id: str
    definitions_version: int | None
    definitions_sha256: str
    preregistered: bool
    arms: dict[str, Any]
    pair_check: dict[str, Any]
    analysis: dict[str, Any]
    created_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StoredAnalysis:
        return cls(
            row["id"],
            row["study_id"],
            row["definitions_version"],
            row["definitions_sha256"],
            bool(row["preregistered"]),
            json.loads(row["arms_json"]),
            json.loads(row["pair_check_json"]),
            json.loads(row["analysis_json"]),
            row["created_at"],
        )


def file_definitions(
    conn: sqlite3.Connection, study_id: str, definitions: Mapping[str, Any], filed_at: float
) -> tuple[FiledDefinitions, bool]:
    """File `definitions` for the study inside the caller's transaction; returns (the version, whether new)."""
    text = dumps_object(definitions, "the divergence definitions")
    sha = definitions_sha256(definitions)
    latest = conn.execute(
        "SELECT * FROM diverge_definitions WHERE study_id = ? ORDER BY version DESC LIMIT 1", (study_id,)
    ).fetchone()
    if latest is not None and latest["sha256"] == sha:
        return FiledDefinitions.from_row(latest), False
    version = 1 if latest is None else latest["version"] + 1
    conn.execute(
        "INSERT INTO diverge_definitions (study_id, version, definitions_json, sha256, filed_at)"
        " VALUES (?, ?, ?, ?, ?)",
        (study_id, version, text, sha, filed_at),
    )
    return FiledDefinitions(study_id, version, json.loads(text), sha, filed_at), True


def filed(conn: sqlite3.Connection, study_id: str) -> list[FiledDefinitions]:
    """Every filed version of a study's definitions, oldest first."""
    rows = conn.execute("SELECT * FROM diverge_definitions WHERE study_id = ? ORDER BY version", (study_id,))
    return [FiledDefinitions.from_row(r) for r in rows]


def analyses(conn: sqlite3.Connection, study_id: str) -> list[StoredAnalysis]:
    rows = conn.execute(
        "SELECT * FROM diverge_analyses WHERE study_id = ? ORDER BY created_at, id", (study_id,)
    )
    return [StoredAnalysis.from_row(r) for r in rows]


def first_run_started(conn: sqlite3.Connection, study_id: str) -> float | None:
    """When the study's first run started (unix seconds), or None when none has."""
    row = conn.execute("SELECT min(started_at) FROM runs WHERE study_id = ?", (study_id,)).fetchone()
    return None if row[0] is None else float(row[0])


class DivergencePart(LedgerPart):
    """`ledger.divergence`: the divergence definitions filed with studies, and the analyses made under them."""

    __slots__ = ()

    def file_definitions(self, study_id: str, definitions: Mapping[str, Any]) -> tuple[FiledDefinitions, bool]:
        """File divergence definitions with a study: a new version unless they equal the latest one.

        Returns the filed version and whether it is new; earlier versions are kept."""
        with self._write() as conn:
            if not conn.execute("SELECT 1 FROM studies WHERE study_id = ?", (study_id,)).fetchone():
                raise InvalidLedgerWrite(f"no study {study_id!r} in the ledger")
            found, new = file_definitions(conn, study_id, definitions, time.time())
        if new:
            log.info("diverge.filed", study_id=study_id, version=found.version, sha256=found.sha256)
        return found, new

    def filed(self, study_id: str) -> list[FiledDefinitions]:
        """Every filed version of a study's divergence definitions, oldest first."""
        with self._read() as conn:
            return filed(conn, study_id)

    def first_run_started(self, study_id: str) -> float | None:
        """When the study's first run started (unix seconds); None when no run has started."""
        with self._read() as conn:
            return first_run_started(conn, study_id)

    def save_analysis(
        self,
        study_id: str,
        *,
        definitions_version: int | None,
        definitions_sha256: str,
        preregistered: bool,
        arms: Mapping[str, Any],
        pair_check: Mapping[str, Any],
        analysis: Mapping[str, Any],
    ) -> int:
        """Store one divergence analysis with the check of its pairs; returns its id."""
        if preregistered and definitions_version is None:
            raise InvalidLedgerWrite("an analysis under definitions that were never filed is not preregistered")
        with self._write() as conn:
            values = (study_id, definitions_version, definitions_sha256, int(preregistered),
                      dumps_object(arms, "the arms"), dumps_object(pair_check, "the pair check"),
                      dumps_object(analysis, "the analysis"), time.time())
            try:
                cur = conn.execute(
                    "INSERT INTO diverge_analyses (study_id, definitions_version, definitions_sha256, preregistered,"
                    " arms_json, pair_check_json, analysis_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values)
            except sqlite3.IntegrityError as exc:
                raise InvalidLedgerWrite(f"cannot store the divergence analysis of {study_id}: {exc}") from None
        return int(cur.lastrowid or 0)

    def analyses(self, study_id: str) -> list[StoredAnalysis]:
        """A study's stored divergence analyses, oldest first."""
        with self._read() as conn:
            return analyses(conn, study_id)
