"""One run, start to end: the only path from a planned run to its final state (see run/lifecycle.py).

    prepare -> sandbox -> agent -> copy-out -> evaluate (score or grade, per the task's kind) -> audit

`sbx run`, the local backend and Ray nodes all call `RunLifecycle.run`.

The names are loaded on first use (PEP 562): `orchestrator.run.record`, which every ledger-reading command
imports, must not pull the whole lifecycle (pandas, docker, aiohttp) in with its package (issue 23).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.lazy import lazy_names

if TYPE_CHECKING:
    from orchestrator.run.lifecycle import RunLifecycle
    from orchestrator.run.request import RunRequest

__all__ = ["RunLifecycle", "RunRequest"]

_LAZY = {"RunLifecycle": "orchestrator.run.lifecycle", "RunRequest": "orchestrator.run.request"}

__getattr__ = lazy_names(__name__, _LAZY)
