"""The model gateway: holds the real keys, serves each run on its own unix socket, forwards the agent's
bytes unchanged, records every call and enforces the run's model limits. See docs/gateway.md.

Never imported by anything `sbx --help` loads (it pulls in aiohttp)."""

from orchestrator.gateway.limits import ModelLimits
from orchestrator.gateway.server import Gateway, RunTotals
from orchestrator.gateway.transcript import read_transcript
from orchestrator.specs.usage import TokenUsage

__all__ = ["Gateway", "ModelLimits", "RunTotals", "TokenUsage", "read_transcript"]
