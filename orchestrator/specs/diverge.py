"""Definitions of a divergence analysis, filed before the runs: what counts, what agrees, what is claimed.

The analysis (orchestrator/diverge/analysis.py) reports what these definitions declare as confirmatory
and marks everything else exploratory; a declared cause without a base-rate control is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.specs.loading import load_yaml_model

_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"

#: the analyses a definition can pre-declare; anything reported but not declared is exploratory
Analysis = Literal[
    "outcome_table",
    "net_swing",
    "disagreement",
    "seed_control",
    "divergence_classes",
    "hazard",
    "between_task_share",
    "divergence_vs_disagreement",
    "placement",
]
ANALYSES: tuple[Analysis, ...] = get_args(Analysis)


class Eligibility(BaseModel):
    """Which pairs of runs enter the analysis; every pair left out is counted under its reason."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: both runs have an outcome (pass/fail, or a score when agreement is by score)
    require_outcomes: bool = True
    #: both runs have a transcript; without one a pair still counts for the outcome statistics
    require_transcripts: bool = False
    #: transcripts cut short (a run killed mid-write) may be compared up to the cut
    allow_truncated: bool = False
    #: a pair whose runs failed with one of these classes is left out (infra failures are not the agent's)
    exclude_failure_classes: tuple[str, ...] = ("infra",)
    #: both runs' seeds must be known (a pair is then same-seed, or a different-seed control)
    require_seeds: bool = True


class Agreement(BaseModel):
    """When the two runs of a pair agree on the outcome."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: pass_fail: outcomes are pass/fail; score: outcomes are scores, passing at `pass_threshold`
    kind: Literal["pass_fail", "score"] = "pass_fail"
    #: a score at or above this passes (kind score)
    pass_threshold: float | None = None
    #: two scores within this distance agree (kind score)
    tolerance: float = Field(0.0, ge=0)

    @model_validator(mode="after")
    def _score_needs_threshold(self) -> Agreement:
        if self.kind == "score" and self.pass_threshold is None:
            raise ValueError("agreement by score needs pass_threshold (the outcome table is pass/fail)")
        return self


class Thresholds(BaseModel):
    """The numbers the analysis is held to."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    confidence: float = Field(0.95, gt=0, lt=1)
    alpha: float = Field(0.05, gt=0, lt=1)
    #: the hazard is shown only while at least this many pairs are still identical
    min_at_risk: int = Field(20, ge=1)
    #: a between-task share of the divergence index above this is read as "tasks explain divergence"
    between_task_share: float | None = Field(None, ge=0, le=1)
    n_resamples: int = Field(10_000, ge=100, le=1_000_000)


class NormalisationSpec(BaseModel):
    """What is made comparable before the calls of two runs are compared (orchestrator/diverge/normalise.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    ids: bool = True
    opaque: bool = False
    ignore_usage: bool = True
    ignore_pings: bool = True


class BaseRateControl(BaseModel):
    """Where a cause's base rate is measured: how often it is present where nothing has diverged yet."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the call index of the control (0: the first call)
    at_call: int = Field(0, ge=0)


class Cause(BaseModel):
    """A declared cause of divergence: what is seen at a call when it is present."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(pattern=_NAME)
    #: the two runs' calls differ in a response value / request value / header / the gateway's outcome
    observe: Literal[
        "response_value_differs",
        "request_value_differs",
        "response_header_differs",
        "request_header_differs",
        "outcome_differs",
    ]
    #: the JSON key (first occurrence, any depth) or header name observed
    key: str | None = Field(None, min_length=1, max_length=256)
    #: without a control the analysis refuses to report the cause
    control: BaseRateControl | None = None

    @model_validator(mode="after")
    def _key_when_needed(self) -> Cause:
        if (self.observe == "outcome_differs") != (self.key is None):
            raise ValueError("give key for a value or header cause, and none for outcome_differs")
        return self


class DivergeDefinitions(BaseModel):
    """Everything a divergence analysis commits to before the runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    version: Literal[1] = 1
    eligibility: Eligibility = Eligibility()
    agreement: Agreement = Agreement()
    thresholds: Thresholds = Thresholds()
    normalisation: NormalisationSpec = NormalisationSpec()
    causes: tuple[Cause, ...] = ()
    #: the analyses claimed as confirmatory; the rest of the report is marked exploratory
    declared: frozenset[Analysis] = frozenset(ANALYSES)

    def canonical(self) -> dict[str, Any]:
        """As a JSON object with one spelling per content (declared analyses sorted): what is filed and hashed."""
        data = self.model_dump(mode="json")
        data["declared"] = sorted(data["declared"])
        return data

    @model_validator(mode="after")
    def _unique_causes(self) -> DivergeDefinitions:
        names = [c.name for c in self.causes]
        if len(names) != len(set(names)):
            raise ValueError(f"cause names must be unique, got {names}")
        return self


def load_definitions(path: Path) -> DivergeDefinitions:
    """Divergence definitions from a YAML file; a typo names the file, line and key."""
    return load_yaml_model(path, DivergeDefinitions)
