"""A task bundle: task.yaml plus the repo folder the agent receives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from orchestrator import paths
from orchestrator.failures import ConfigError
from orchestrator.specs.loading import load_yaml_model


class VisibleFile(BaseModel):
    """A prepared file copied into the agent's repo."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    to: str
    visible_to_agent: Literal[True]


class HiddenSet(BaseModel):
    """A scorer-only data set: features go to the scorer container, labels never leave the host."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    features: str
    labels: str
    visible_to_agent: Literal[False]


class Contract(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    entrypoint: str = "train.py"
    predict: str = "predict_proba"
    eval_line: str

    @field_validator("eval_line")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            if re.compile(v).groups != 1:
                raise ValueError("eval_line must have exactly one group: the score")
        except re.error as exc:
            raise ValueError(f"eval_line is not a regular expression: {exc}") from None
        return v


class TaskFiles(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    train: VisibleFile
    eval: VisibleFile
    holdout: HiddenSet
    later: HiddenSet | None = None


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    kind: Literal["ml"]
    description: str = ""
    metric: Literal["auc"]
    target: str
    positive_label: str
    data: str = Field(description="name of the prepared data set under $SBX_HOME/data")
    files: TaskFiles
    repo: str = "repo"
    contract: Contract
    root: Path = Field(default=Path("."), exclude=True)

    @property
    def repo_dir(self) -> Path:
        return self.root / self.repo

    def data_dir(self) -> Path:
        return paths.data_root() / self.data

    def hidden_sets(self) -> dict[str, HiddenSet]:
        return {k: v for k, v in (("holdout", self.files.holdout), ("later", self.files.later)) if v is not None}


def load_task(name_or_path: str | Path) -> TaskSpec:
    """A task by name (tasks/<name>/task.yaml) or by path to its folder or task.yaml."""
    path = Path(name_or_path)
    if path.is_dir():
        path = path / "task.yaml"
    elif not path.suffix:
        path = paths.tasks_root() / str(name_or_path) / "task.yaml"
        if not path.exists():
            known = sorted(p.parent.name for p in paths.tasks_root().glob("*/task.yaml"))
            raise ConfigError(f"no task named {name_or_path!r}; known: {', '.join(known) or 'none'}")
    spec = load_yaml_model(path, TaskSpec)
    spec = spec.model_copy(update={"root": path.parent.resolve()})
    if not (spec.repo_dir / spec.contract.entrypoint).is_file():
        raise ConfigError(f"{path}: repo: {spec.repo_dir} has no {spec.contract.entrypoint}")
    return spec
