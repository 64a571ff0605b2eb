"""Audit records: what an audit concluded about one rule for one run or file, the evidence behind it, and
a reviewer's override.

Verdicts are `flagged`, `clear`, `unanalysable` or `error`. `error` means the audit could not decide (the
file does not parse, is not text, or the analysis ran out of budget); `unanalysable` means it found nothing
but the code's data flow can pass through something the trace cannot see (dynamic code, a name computed at
run time, an import it cannot follow: compliance/opaque.py), each construct with its line as evidence.
Neither is ever silently `clear`: a run with such a record is not compliant until a reviewer overrides it
(the exclusion rule of a study decides how its runs count: orchestrator/stats/exclusion.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import UTC, datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

# the Literal types are plain.py's, which reads the canonical rows back without these models
from orchestrator.compliance.plain import EvidenceKind, OverrideVerdict, Verdict
from orchestrator.compliance.verdicts import passes


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EvidenceStep(_Model):
    """One line on the path from a source to a sink, checkable by opening the file at that line."""

    file: str
    line: int = Field(ge=0)
    #: the source text of the statement (its first lines for a long one)
    code: str
    #: the variables carrying the data at this step, in the order they appear; "prepare:df" is the
    #: parameter `df` of `prepare`
    names: list[str] = Field(default_factory=list)
    #: what happens here: the source, a cross-row operation, a call, the sink
    note: str = ""
    #: the function the line is in ("" for module level)
    scope: str = ""


class BatchCheck(_Model):
    """The scorer's dynamic check: rows predicted again in a different batch and compared."""

    rows_checked: int = Field(ge=0)
    rows_changed: int = Field(ge=0)
    max_abs_change: float = Field(ge=0)
    tolerance: float = Field(ge=0)

    @model_validator(mode="after")
    def _changed_within_checked(self) -> BatchCheck:
        if self.rows_changed > self.rows_checked:
            raise ValueError(f"rows_changed ({self.rows_changed}) exceeds rows_checked ({self.rows_checked})")
        return self


class Evidence(_Model):
    """Why a record has its verdict: a static trace (its steps), a batch check, or why it could not decide."""

    kind: EvidenceKind
    summary: str
    steps: list[EvidenceStep] = Field(default_factory=list)
    batch_check: BatchCheck | None = None


class Override(_Model):
    """A reviewer's decision, which replaces the audit's verdict but not its evidence."""

    verdict: OverrideVerdict
    reason: str = Field(min_length=1)
    at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    @model_validator(mode="after")
    def _reason_not_blank(self) -> Override:
        if not self.reason.strip():
            raise ValueError("an override needs a reason")
        return self


class AuditRecord(_Model):
    """One rule's verdict on one run (run_id) or file (file)."""

    run_id: str | None = None
    file: str | None = None
    rule: str
    rule_version: str
    verdict: Verdict
    evidence: list[Evidence] = Field(default_factory=list)
    #: what the audit could not see or check (for example: no predict_proba in the file)
    notes: list[str] = Field(default_factory=list)
    override: Override | None = None

    @property
    def final_verdict(self) -> Verdict:
        """The verdict after the reviewer's override, if there is one."""
        return self.override.verdict if self.override is not None else self.verdict

    def with_override(self, override: Override | None) -> AuditRecord:
        return self.model_copy(update={"override": override})


class Verdicted(Protocol):
    """What `is_compliant` reads of a record: an AuditRecord (or anything with its rule and final verdict)."""

    @property
    def rule(self) -> str: ...
    @property
    def final_verdict(self) -> str: ...


def is_compliant(records: Iterable[Verdicted], rules: Collection[str] | None = None) -> bool:
    """Whether a run passes: every record of the rules in `rules` clear after overrides
    (compliance/verdicts.py `passes`: by default the reported-only rules do not decide, and a run with no
    deciding records has not been audited and does not pass)."""
    return passes(((r.rule, r.final_verdict) for r in records), rules)
