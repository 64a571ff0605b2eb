"""The knobs of one scoring, validated once (STYLE.md section 3)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.specs import Budget


class ScoreOptions(BaseModel):
    """Limits of the scorer container and the batch plan. Defaults suit the reference data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    batch_rows: int = Field(1000, ge=1, description="largest main batch given to predict_proba")
    check_rows: int = Field(512, ge=0, description="rows predicted again in another batch context")
    check_singles: int = Field(64, ge=0, description="of those, how many are predicted alone")
    large_contexts: bool = Field(True, description="also predict the check rows in two contexts at the "
                                                   "training frame's size (scored rows; training rows)")
    fresh_check: bool = Field(True, description="predict the check rows again in a freshly started scorer, "
                                                "first seen in a new context (answers cached per row show)")
    eval_rows: bool = Field(True, description="predict the evaluation file's rows too: the eval score sbx "
                                              "computes (labels stay on the host)")
    tolerance: float = Field(1e-6, ge=0, description="a larger change marks the run batch_dependent")
    seed: int = Field(0, description="seeds the batch plan")
    cpus: float = Field(2.0, gt=0, description="CPU limit (capped by the engine's cores and by cpuset)")
    cpuset: str | None = Field(None, pattern=r"^[0-9]+([-,][0-9]+)*$",
                               description="CPUs the scorer may use, e.g. a study slot's (default: any)")
    memory_mb: int = Field(4096, ge=128)
    pids: int = Field(512, ge=16)
    train_timeout_s: float = Field(900.0, gt=0, description="train.py, from start to predict_proba (wall clock)")
    predict_timeout_s: float = Field(600.0, gt=0, description="all batches together (wall clock)")
    train_cpu_limit_s: float | None = Field(None, gt=0, description="CPU-seconds train.py may use (None: only "
                                                                    "the wall clock bounds it)")
    predict_cpu_limit_s: float | None = Field(None, gt=0, description="CPU-seconds all batches may use")
    connect_timeout_s: float = Field(60.0, gt=0, description="the runner's setup, before agent code")
    output_limit_mb: int = Field(64, ge=1, description="output the scored code may print (host-side count)")
    work_mb: int = Field(1024, ge=16, description="the workspace (tmpfs, counts as memory)")

def cpuset_size(cpuset: str) -> int:
    """How many CPUs a cpuset string like "0-3,6" names."""
    n = 0
    for part in cpuset.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def budget_limits(budget: Budget, cpuset: str | None) -> dict[str, object]:
    """The scorer's settings for a run on `budget`, as its experiments had them: the run's cores, cpuset,
    memory and pids, and a CPU limit on training (and, separately, on predicting) of what one experiment
    may use: cores x the experiment time limit, at most the run's CPU budget. The wall clock of training
    allows twice the experiment's time limit plus 30 s (a busy host), the CPU limit is what binds."""
    cpu = float(min(budget.cpu_seconds, budget.cores * budget.experiment_timeout_s))
    return {"cpus": float(budget.cores), "cpuset": cpuset, "memory_mb": budget.memory_mb, "pids": budget.pids,
            "train_cpu_limit_s": cpu, "predict_cpu_limit_s": cpu,
            "train_timeout_s": 2 * budget.experiment_timeout_s + 30}
