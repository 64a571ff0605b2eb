"""The ledger: SQLite schema, the run state machine, and the records read back from it."""

from orchestrator.ledger.ledger import ADHOC, Ledger, default_path
from orchestrator.ledger.records import EventRecord, ExperimentRecord, RunRecord, StudyRecord
from orchestrator.ledger.schema import MIGRATIONS, Migration
from orchestrator.ledger.state import NEXT, FailureClass, RunState, transition

__all__ = [
    "ADHOC",
    "MIGRATIONS",
    "NEXT",
    "EventRecord",
    "ExperimentRecord",
    "FailureClass",
    "Ledger",
    "Migration",
    "RunRecord",
    "RunState",
    "StudyRecord",
    "default_path",
    "transition",
]
