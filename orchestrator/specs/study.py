"""A study: a task (or several: `tasks`), a budget, agent x model pairings, repeats per pairing, datasets to
score, a backend."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestrator import paths
from orchestrator.failures import ConfigError
from orchestrator.specs.judge import JudgeSpec
from orchestrator.specs.loading import load_yaml_model

_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
Dataset = Literal["holdout", "later"]


class Pairing(BaseModel):
    """One agent (a built-in or CLI agent by name, or an executable path) with a model, the endpoint its
    calls go to through the gateway (endpoints.yaml; CLI agents need both), and agent options."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    agent: str | None = None
    agent_command: str | None = None
    model: str | None = None
    endpoint: str | None = Field(None, pattern=_NAME, description="model endpoint name in the endpoints file")
    label: str | None = Field(None, pattern=_NAME)
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)
    #: take the seeds of the pairing with this name, repeat by repeat (paired arms run with the same seeds)
    seed_as: str | None = Field(None, pattern=_NAME)

    @model_validator(mode="after")
    def _one_agent(self) -> Pairing:
        if (self.agent is None) == (self.agent_command is None):
            raise ValueError("give exactly one of agent (a built-in or CLI agent) or agent_command (a path)")
        if self.endpoint is not None and not self.model:
            raise ValueError("an endpoint needs a model: give `model` too")
        return self

    @property
    def name(self) -> str:
        """The pairing's label in the ledger and reports: `label`, else agent[/model]."""
        if self.label:
            return self.label
        agent = self.agent or Path(self.agent_command or "").name
        return f"{agent}/{self.model}" if self.model else agent


class LocalBackend(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["local"] = "local"
    slots: int | None = Field(None, ge=1, description="sandboxes at once (default: as many as cores and memory allow)")


class RayBackend(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["ray"]
    address: str = Field("auto", description="Ray cluster address (ray://host:10001, host:6379 or auto)")
    slots_per_node: int | None = Field(None, ge=1, description="default: as many as the node's cores allow")


Backend = Annotated[LocalBackend | RayBackend, Field(discriminator="type")]


class Price(BaseModel):
    """One model's list prices in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input: float = Field(ge=0)
    output: float = Field(ge=0)
    #: cached input tokens; None when the card lists no cached rate (an unlisted price is not a zero price)
    cached_input: float | None = Field(None, ge=0)


class RateCard(BaseModel):
    """Dated list prices to price imported token counts with (`sbx report` says whose card and when)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1, description="whose prices, e.g. 'OpenRouter list prices'")
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="the day the prices were read (YYYY-MM-DD)")
    #: model name (the runs table's `model`) -> its prices
    prices: dict[str, Price] = Field(min_length=1)


class ReportSpec(BaseModel):
    """What the report needs to know that the runs do not say: which factors to compare and against which
    level, the starting code's scores, the budget, a rate card, how many top runs to inspect."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: runs-table columns that are factors of the design (pairing options go in as columns of their own)
    factors: list[str] = Field(default_factory=lambda: ["agent", "model"], min_length=1)
    #: factor -> its reference level (default: the first level in sorted order, never the row order)
    reference: dict[str, str] = Field(default_factory=dict)
    #: the starting code's score per score column (eval_score, holdout_score, later_score): the baseline
    baseline: dict[Literal["eval_score", "holdout_score", "later_score"], float] = Field(default_factory=dict)
    #: each run's CPU-second budget (budget use = cpu_seconds_metered / this); a column overrides it per run
    budget_cpu_seconds: float | None = Field(None, gt=0)
    rate_card: RateCard | None = None
    #: other models' prices to reprice the whole token ledger at (a sensitivity calculation: another model
    #: would write a different transcript), name -> prices per million tokens
    reprice_at: dict[str, Price] = Field(default_factory=dict)
    #: the cached share of input the repricing's "if cached" column assumes
    reprice_cached_share: float = Field(0.9, ge=0, le=1)
    #: how many of the highest scores to inspect for rule-breakers
    top_n: int = Field(10, ge=1, le=1000)

    @model_validator(mode="after")
    def _reference_names_a_factor(self) -> ReportSpec:
        unknown = sorted(set(self.reference) - set(self.factors))
        if unknown:
            raise ValueError(f"reference names {', '.join(unknown)}, not among the factors {self.factors}")
        return self


class StudySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME)
    task: str = "flight-delays"
    #: several tasks (tests tasks graded pass/fail, or ml tasks): every pairing runs `repeats` times on each.
    #: Give either `task` or `tasks`.
    tasks: list[str] | None = Field(None, min_length=1)
    budget: str = "smoke"
    pairings: list[Pairing] = Field(min_length=1)
    repeats: int = Field(ge=1, le=10_000)
    datasets: list[Dataset] = Field(default_factory=lambda: list[Dataset](["holdout"]))
    backend: Backend = Field(default_factory=LocalBackend)
    infra_retries: int = Field(2, ge=0, le=20, description="new attempts after an infra failure")
    seed: int = 0
    #: what the report needs beyond the runs (factors, reference levels, baseline, budget, rate card)
    report: ReportSpec | None = None
    #: a model that grades every run of the study from its task's instruction and the delivered diff
    #: (specs/judge.py), beside the hidden tests on a tests task; it replaces any judge its tasks name
    judge: JudgeSpec | None = None

    @field_validator("datasets")
    @classmethod
    def _holdout_first(cls, v: list[str]) -> list[str]:
        if "holdout" not in v:
            raise ValueError("datasets must include holdout (every run is scored on it)")
        if len(set(v)) != len(v):
            raise ValueError("datasets are listed twice")
        return v

    @model_validator(mode="after")
    def _unique_pairings(self) -> StudySpec:
        names = [p.name for p in self.pairings]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"pairings share a name: {', '.join(dupes)}; give them distinct `label`s")
        return self

    @model_validator(mode="after")
    def _seed_as_names_a_pairing(self) -> StudySpec:
        by_name = {p.name: p for p in self.pairings}
        for p in self.pairings:
            if p.seed_as is None:
                continue
            other = by_name.get(p.seed_as)
            if other is None or other is p:
                raise ValueError(f"pairing {p.name}: seed_as {p.seed_as!r} must name another pairing of the study")
            if other.seed_as is not None:
                raise ValueError(f"pairing {p.name}: seed_as names {other.name}, which takes its seeds from "
                                 f"{other.seed_as}; name {other.seed_as} instead")
        return self

    @model_validator(mode="after")
    def _task_or_tasks(self) -> StudySpec:
        if self.tasks is not None:
            if "task" in self.model_fields_set:
                raise ValueError("give either task (one) or tasks (several), not both")
            dupes = sorted({t for t in self.tasks if self.tasks.count(t) > 1})
            if dupes:
                raise ValueError(f"tasks are listed twice: {', '.join(dupes)}")
        return self

    @property
    def task_names(self) -> list[str]:
        """The study's tasks, in the order given (one for a single-task study)."""
        return list(self.tasks) if self.tasks is not None else [self.task]

    def canonical(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        if data.get("tasks") is None:  # added later: a single-task spec stays as it was stored
            data.pop("tasks", None)
        for key in ("report", "judge"):  # added later: a spec without them stays as it was stored
            if data.get(key) is None:
                data.pop(key, None)
        for pairing in data["pairings"]:  # keys added later stay out while unset: stored specs still match
            for key in _UNSET_LEFT_OUT:
                if pairing.get(key) is None:
                    pairing.pop(key, None)
        return data

    @property
    def endpoints_used(self) -> list[str]:
        """The endpoints the study's model calls go to: its pairings' and its judge's."""
        judge = {self.judge.endpoint} if self.judge is not None else set()
        return sorted({p.endpoint for p in self.pairings if p.endpoint} | judge)


#: Pairing keys added after studies were first stored; canonical() leaves them out while they are None
_UNSET_LEFT_OUT = ("endpoint", "seed_as")


def load_study(name_or_path: str | Path) -> StudySpec:
    """Parse and validate a study file, or a shipped study given by name (studies/<name>.yaml, e.g. `demo`,
    found from an installed sbx too); problems name the file, line and key."""
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        path = paths.studies_root() / f"{name_or_path}.yaml"
        if not path.is_file():
            known = sorted(p.stem for p in paths.studies_root().glob("*.yaml"))
            raise ConfigError(f"no study file {name_or_path!r} and no shipped study of that name; "
                              f"shipped: {', '.join(known) or 'none'}")
    return load_yaml_model(path, StudySpec)
