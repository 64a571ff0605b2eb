"""The knobs of one scoring, validated once (STYLE.md section 3)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ScoreOptions(BaseModel):
    """Limits of the scorer container and the batch plan. Defaults suit the reference data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    batch_rows: int = Field(1000, ge=1, description="largest main batch given to predict_proba")
    check_rows: int = Field(512, ge=0, description="rows predicted again in another batch context")
    check_singles: int = Field(64, ge=0, description="of those, how many are predicted alone")
    tolerance: float = Field(1e-6, ge=0, description="a larger change marks the run batch_dependent")
    seed: int = Field(0, description="seeds the batch plan")
    cpus: float = Field(2.0, gt=0, description="CPU limit (capped by the engine's cores and by cpuset)")
    cpuset: str | None = Field(None, pattern=r"^[0-9]+([-,][0-9]+)*$",
                               description="CPUs the scorer may use, e.g. a study slot's (default: any)")
    memory_mb: int = Field(4096, ge=128)
    pids: int = Field(512, ge=16)
    train_timeout_s: float = Field(900.0, gt=0, description="train.py, from start to predict_proba")
    predict_timeout_s: float = Field(600.0, gt=0, description="all batches together")
    connect_timeout_s: float = Field(60.0, gt=0, description="the runner's setup, before agent code")
    output_limit_mb: int = Field(64, ge=1, description="largest file the scored code may write (its output too)")
    work_mb: int = Field(1024, ge=16, description="the writable repo folder (tmpfs, counts as memory)")


def cpuset_size(cpuset: str) -> int:
    """How many CPUs a cpuset string like "0-3,6" names."""
    n = 0
    for part in cpuset.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n
