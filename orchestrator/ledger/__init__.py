"""The ledger: SQLite schema, the run state machine, and the records read back from it."""

from orchestrator.ledger.audits import AuditRow, OverrideRow
from orchestrator.ledger.diverge import FiledDefinitions, StoredAnalysis
from orchestrator.ledger.ledger import ADHOC, Ledger
from orchestrator.ledger.model_usage import ModelUsage
from orchestrator.ledger.outcomes import GradedOutcome, GradingRow
from orchestrator.ledger.records import AttemptState, EventRecord, ExperimentRecord, RunRecord, StudyRecord
from orchestrator.ledger.schema import MIGRATIONS, Migration
from orchestrator.ledger.scores import ScoreResult
from orchestrator.ledger.state import NEXT, FailureClass, RunState, transition
from orchestrator.ledger.study_reads import StudyReads

__all__ = [
    "ADHOC",
    "MIGRATIONS",
    "NEXT",
    "AttemptState",
    "AuditRow",
    "EventRecord",
    "ExperimentRecord",
    "FailureClass",
    "FiledDefinitions",
    "GradingRow",
    "Ledger",
    "Migration",
    "ModelUsage",
    "OverrideRow",
    "GradedOutcome",
    "RunRecord",
    "RunState",
    "ScoreResult",
    "StoredAnalysis",
    "StudyReads",
    "StudyRecord",
    "transition",
]
