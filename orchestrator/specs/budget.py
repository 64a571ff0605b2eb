"""A run's budget: what it may spend and where it is stopped."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator import paths
from orchestrator.failures import ConfigError
from orchestrator.specs.loading import load_yaml_model


class Budget(BaseModel):
    """Limits of one run. CPU-seconds are kernel cgroup accounting, summed over all cores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    cpu_seconds: float = Field(gt=0, description="Python compute the agent may spend (the metered `py` set)")
    hard_stop_cpu_seconds: float = Field(gt=0, description="the whole container is killed past this total")
    experiments: int = Field(ge=0, description="counted experiments through run_experiment")
    experiment_timeout_s: float = Field(gt=0, le=86_400, description="time limit of one experiment")
    cores: int = Field(ge=1, le=256)
    memory_mb: int = Field(ge=256, description="memory, equal to memory+swap (no swap)")
    pids: int = Field(ge=16, le=1_000_000)
    wall_clock_minutes: float = Field(gt=0)
    stall_seconds: float = Field(900, gt=0, description="no output and no CPU for this long stops the run")
    disk_mb: int = Field(2048, ge=16, description="cap on the workspace's disk use")
    experiment_concurrency: int = Field(1, ge=1, description="experiments that may run at the same time")
    # model gateway limits (LLM agents); None = no limit. Checked by the gateway before each call.
    model_calls: int | None = Field(None, ge=0, description="model calls the run may make")
    model_tokens: int | None = Field(None, ge=0, description="input + output tokens, as the gateway parsed them")
    model_cost_usd: float | None = Field(None, ge=0, description="cost of the run's calls at the rate card in force")

    @model_validator(mode="after")
    def _consistent(self) -> Budget:
        if self.hard_stop_cpu_seconds < self.cpu_seconds:
            raise ValueError(
                f"hard_stop_cpu_seconds ({self.hard_stop_cpu_seconds:g}) must be at least cpu_seconds ({self.cpu_seconds:g})"
            )
        if self.experiment_timeout_s > self.wall_clock_minutes * 60:
            raise ValueError("experiment_timeout_s is longer than the whole wall clock")
        if self.experiment_concurrency > self.cores:
            raise ValueError(f"experiment_concurrency ({self.experiment_concurrency}) exceeds cores ({self.cores})")
        return self


def load_budget(name_or_path: str | Path) -> Budget:
    """A budget by name (budgets/<name>.yaml) or by path to a YAML file."""
    path = Path(name_or_path)
    if not path.suffix:
        path = paths.budgets_root() / f"{name_or_path}.yaml"
        if not path.exists():
            known = sorted(p.stem for p in paths.budgets_root().glob("*.yaml"))
            raise ConfigError(f"no budget named {name_or_path!r}; known: {', '.join(known) or 'none'}")
    return load_yaml_model(path, Budget)
