"""One run, start to end: the only path from a planned run to its final state (see run/lifecycle.py).

    prepare -> sandbox -> agent -> copy-out -> evaluate (score or grade, per the task's kind) -> audit

`sbx run`, the local backend and Ray nodes all call `RunLifecycle.run`.
"""

from orchestrator.run.lifecycle import RunLifecycle
from orchestrator.run.request import RunRequest

__all__ = ["RunLifecycle", "RunRequest"]
