"""One run, start to end: the only path from a planned run to its final state (see run/lifecycle.py).

    prepare -> sandbox -> agent -> copy-out -> evaluate (score or grade, per the task's kind) -> audit

`sbx run`, the local backend and Ray nodes all call `RunLifecycle.run`.

The names are loaded on first use (PEP 562): `orchestrator.run.record`, which every ledger-reading command
imports, must not pull the whole lifecycle (pandas, docker, aiohttp) in with its package (issue 23).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.run.lifecycle import RunLifecycle
    from orchestrator.run.request import RunRequest

__all__ = ["RunLifecycle", "RunRequest"]

_LAZY = {"RunLifecycle": "orchestrator.run.lifecycle", "RunRequest": "orchestrator.run.request"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this hook
    return value
