"""What one run needs: the task, budget and agent, where it runs, and how it is scored."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.agents import AgentSpec
from orchestrator.failures import ConfigError
from orchestrator.sandbox.copyout import CopyLimits
from orchestrator.scoring.options import ScoreOptions
from orchestrator.specs import Budget, TaskSpec
from orchestrator.specs.judge import JudgeSpec
from orchestrator.specs.task import TestsTaskSpec


@dataclass(frozen=True)
class RunRequest:
    task: TaskSpec | TestsTaskSpec         # an ml task (scored) or a tests task (graded pass/fail)
    budget: Budget
    agent: AgentSpec
    data_dir: Path                          # the prepared data set the run uses
    study_id: str | None = None
    pairing: str | None = None
    model: str | None = None
    #: the model endpoint (endpoints.yaml) the run's calls go to through the gateway; CLI agents need one
    endpoint: str | None = None
    repeat: int | None = None               # None: the next free repeat of this pairing (ad-hoc runs)
    seed: int = 0
    cpuset: str | None = None               # None: the first `budget.cores` CPUs of this process
    slot: int | None = None
    node: str | None = None
    agent_options: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    #: which evaluations follow delivery: empty = none (`sbx run --no-score`); the first is the main one.
    #: A tests task names none: it is always graded (run/evaluate.py)
    datasets: tuple[str, ...] = ("holdout",)
    score_options: ScoreOptions = field(default_factory=ScoreOptions)
    #: caps and time limit of the copy-out (run/deliver.py)
    copy_limits: CopyLimits = field(default_factory=CopyLimits)
    #: the judge that grades the run after its evaluation (run/judge.py): the study's, else the task's
    judge: JudgeSpec | None = None

    def resolved_cpuset(self) -> str:
        return self.cpuset or default_cpuset(self.budget.cores)


def default_cpuset(cores: int) -> str:
    """The first `cores` CPUs this process may use, as a cpuset string."""
    cpus = sorted(os.sched_getaffinity(0))
    if cores > len(cpus):
        raise ConfigError(f"the budget asks for {cores} cores but this machine offers {len(cpus)}")
    return ",".join(str(c) for c in cpus[:cores])
