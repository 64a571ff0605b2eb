"""A study: a task, a budget, agent x model pairings, repeats per pairing, datasets to score, a backend."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestrator.specs.loading import load_yaml_model

_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"


class Pairing(BaseModel):
    """One agent (built-in name or executable path) with an optional model label and agent options."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    agent: str | None = None
    agent_command: str | None = None
    model: str | None = None
    label: str | None = Field(None, pattern=_NAME)
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_agent(self) -> Pairing:
        if (self.agent is None) == (self.agent_command is None):
            raise ValueError("give exactly one of agent (a built-in) or agent_command (a path)")
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


class StudySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME)
    task: str = "flight-delays"
    budget: str = "smoke"
    pairings: list[Pairing] = Field(min_length=1)
    repeats: int = Field(ge=1, le=10_000)
    datasets: list[Literal["holdout", "later"]] = Field(default_factory=lambda: ["holdout"])
    backend: Backend = Field(default_factory=LocalBackend)
    infra_retries: int = Field(2, ge=0, le=20, description="new attempts after an infra failure")
    seed: int = 0

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

    def canonical(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def load_study(path: Path) -> StudySpec:
    """Parse and validate a study file; problems name the file, line and key."""
    return load_yaml_model(Path(path), StudySpec)
