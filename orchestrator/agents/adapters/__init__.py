"""Adapters for real agent CLIs (claude-code, codex, opencode, pi, mini-swe-agent), one module each.

A module here that defines `ADAPTER` is an agent: adding one is that module plus its line in
images/agents/agents.lock (docs/agents.md). Modules are found by listing this package, so nothing else
names them; they are imported only when asked for.
"""

from __future__ import annotations

import importlib
import pkgutil

from orchestrator.agents.adapters.protocol import (
    DUMMY_KEY,
    PROMPT,
    Adapter,
    Launch,
    ModelTarget,
    NpmInstall,
    PipInstall,
    SelfReport,
    WireApi,
)
from orchestrator.failures import ConfigError

_NOT_AGENTS = {"protocol", "reports", "usage"}


def _module(name: str) -> str:
    return name.replace("-", "_")


def adapter_names() -> list[str]:
    """Every agent with an adapter module, by its CLI name (module `claude_code` is `claude-code`)."""
    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__)
                  if m.name not in _NOT_AGENTS and not m.name.startswith("_"))


def get_adapter(name: str) -> Adapter:
    if name not in adapter_names():
        raise ConfigError(f"unknown agent CLI {name!r}; known: {', '.join(adapter_names())}")
    module = importlib.import_module(f"{__name__}.{_module(name)}")
    adapter = getattr(module, "ADAPTER", None)
    if not isinstance(adapter, Adapter) or adapter.name != name:
        raise ConfigError(f"{module.__name__} must define ADAPTER = Adapter(name={name!r}, ...)")
    return adapter


__all__ = ["DUMMY_KEY", "PROMPT", "Adapter", "Launch", "ModelTarget", "NpmInstall", "PipInstall", "SelfReport",
           "WireApi", "adapter_names", "get_adapter"]
