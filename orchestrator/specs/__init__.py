"""Budget, task, agent and study specs: validated once, at load, with errors that name the file, line and key."""

from orchestrator.specs.budget import Budget, load_budget
from orchestrator.specs.task import TaskSpec, load_task

__all__ = ["Budget", "TaskSpec", "load_budget", "load_task"]
