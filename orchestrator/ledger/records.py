"""Typed, read-only views of ledger rows, and the JSON form of a run's record."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, get_args

from orchestrator.ledger.state import FailureClass, RunState

#: crashes, timeouts and OOMs count as experiments; a refusal is recorded but not counted
ExperimentStatus = Literal["ok", "crash", "timeout", "oom", "refused"]
EXPERIMENT_STATUSES: tuple[str, ...] = get_args(ExperimentStatus)


@dataclass(frozen=True)
class StudyRecord:
    study_id: str
    name: str
    spec: dict[str, Any]
    created_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> StudyRecord:
        return cls(row["study_id"], row["name"], json.loads(row["spec_json"]), row["created_at"])


@dataclass(frozen=True)
class RunRecord:
    """One attempt of one run. Measurements are None until recorded (None is "not measured", not 0)."""

    run_id: str
    study_id: str
    study_name: str
    task: str
    pairing: str
    agent: str
    model: str | None
    budget_name: str
    repeat: int
    attempt: int
    retry_of: str | None
    status: RunState
    failure_class: FailureClass | None
    failure_reason: str | None
    counted: bool
    stop_reason: str | None
    created_at: float
    started_at: float | None
    ended_at: float | None
    wall_seconds: float | None
    cpu_seconds_metered: float | None
    cpu_seconds_container: float | None
    experiments_counted: int
    experiments_refused: int
    delivered_sha256: str | None
    commits: int | None
    image: str | None
    resources: dict[str, Any]
    node: str | None
    slot: int | None
    container_id: str | None
    agent_exit_code: int | None
    artifact_manifest: str | None
    meta: dict[str, Any]

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> RunRecord:
        # one dict of the row, then the fields by name: a study's read builds 100,000 of these, and both
        # `fields()` and a Row's lookup by name cost more than the rest of the record (issue 23)
        got = dict(zip(row.keys(), row, strict=True))
        return cls(
            **{name: got[name] for name in _PLAIN},
            status=RunState(got["status"]),
            failure_class=FailureClass(got["failure_class"]) if got["failure_class"] else None,
            counted=bool(got["counted"]),
            resources=json.loads(got["resources_json"]),
            meta=json.loads(got["meta_json"]),
        )

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["status"] = str(self.status)
        out["failure_class"] = str(self.failure_class) if self.failure_class else None
        return out


_DECODED = frozenset({"status", "failure_class", "counted", "resources", "meta"})
#: the fields of a RunRecord that are their column as stored
_PLAIN = tuple(f.name for f in fields(RunRecord) if f.name not in _DECODED)

@dataclass(frozen=True)
class AttemptState:
    """Where one attempt stands, without the rest of its row (no JSON decoded): what `sbx study status` and
    the live display count, every second, over a whole study."""

    run_id: str
    task: str
    pairing: str
    repeat: int
    attempt: int
    status: RunState
    cpu_seconds_container: float | None


#: the query that builds RunRecords; append WHERE / ORDER BY
RUN_SELECT = "SELECT runs.*, studies.name AS study_name FROM runs JOIN studies USING (study_id)"


@dataclass(frozen=True)
class EventRecord:
    id: int
    run_id: str
    time: float
    kind: str
    detail: dict[str, Any]

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> EventRecord:
        return cls(row["id"], row["run_id"], row["time"], row["kind"], json.loads(row["detail_json"]))

    def to_json(self) -> dict[str, Any]:
        return {"time": self.time, "kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class ExperimentRecord:
    """One request to run an experiment. Counted ones have n = 1, 2, ...; refused ones have n None."""

    run_id: str
    n: int | None
    status: ExperimentStatus
    counted: bool
    commit_sha: str | None
    train_sha256: str | None
    eval_score: float | None
    seconds: float | None
    cpu_seconds: float | None
    started_at: float | None
    note: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ExperimentRecord:
        values = {f.name: row[f.name] for f in fields(cls) if f.name != "counted"}
        return cls(**values, counted=bool(row["counted"]))

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        del out["run_id"]
        return out
