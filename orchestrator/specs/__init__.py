"""Budget, task, agent and study specs: validated once, at load, with errors that name the file, line and key."""

from orchestrator.specs.budget import Budget, load_budget
from orchestrator.specs.task import (
                                     PythonEnvironment,
                                     TaskSpec,
                                     TestsTaskSpec,
                                     load_environment,
                                     load_task,
                                     load_tests_task,
)

__all__ = ["Budget", "PythonEnvironment", "TaskSpec", "TestsTaskSpec", "load_budget", "load_environment",
           "load_task", "load_tests_task"]
