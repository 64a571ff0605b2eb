"""Per-run model limits, checked by the gateway before each call, and the refusals it answers with.

A refusal is answered in the API's own error shape, the way the real APIs answer a spent balance or a rate
limit, so each CLI handles it as it would a real one: a spent limit is Anthropic's 400
`invalid_request_error` (credit balance) and OpenAI's 429 `insufficient_quota` (not retried by the SDKs);
too many calls at once is a 429 rate-limit error (retried after `retry-after`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from orchestrator.gateway.usage import Usage


@dataclass(frozen=True)
class ModelLimits:
    calls: int | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    #: calls of one run in flight at once; more are refused (a flood)
    in_flight: int = 16

    @classmethod
    def from_budget(cls, budget: Any, in_flight: int = 16) -> ModelLimits:
        return cls(calls=getattr(budget, "model_calls", None), tokens=getattr(budget, "model_tokens", None),
                   cost_usd=getattr(budget, "model_cost_usd", None), in_flight=in_flight)


@dataclass
class Refusal:
    reason: str        # "model_calls" | "model_tokens" | "model_cost_usd" | "in_flight" | "path" | "method" | "body"
    message: str
    status: int
    kind: str          # "limit" (spent), "rate" (flood) or "request" (never forwarded)


def check(limits: ModelLimits, *, calls: int, in_flight: int, usage: Usage, cost: float) -> Refusal | None:
    """The refusal for the next call, or None when it may go. `calls` counts calls already let through."""
    if limits.calls is not None and calls >= limits.calls:
        return Refusal("model_calls", f"sbx: this run's model_calls limit ({limits.calls}) is spent", 0, "limit")
    if limits.tokens is not None and usage.tokens >= limits.tokens:
        return Refusal("model_tokens", f"sbx: this run's model_tokens limit ({limits.tokens}) is spent "
                       f"({usage.tokens} used)", 0, "limit")
    if limits.cost_usd is not None and cost >= limits.cost_usd:
        return Refusal("model_cost_usd", f"sbx: this run's model_cost_usd limit ({limits.cost_usd:g}) is spent "
                       f"({cost:.4f} used)", 0, "limit")
    if in_flight >= limits.in_flight:
        return Refusal("in_flight", f"sbx: more than {limits.in_flight} model calls at once", 429, "rate")
    return None


def error_response(api: str, refusal: Refusal) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a refusal in the API's own error shape."""
    if refusal.kind == "limit":
        status = 400 if api == "anthropic" else 429
        etype = "invalid_request_error" if api == "anthropic" else "insufficient_quota"
        code: str | None = "insufficient_quota"
    elif refusal.kind == "rate":
        status, etype, code = 429, "rate_limit_error" if api == "anthropic" else "requests", "rate_limit_exceeded"
    else:
        status = refusal.status or 400
        etype = {404: "not_found_error", 405: "invalid_request_error", 413: "request_too_large"}.get(
            status, "invalid_request_error")
        code = None
    refusal.status = status
    if api == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": etype, "message": refusal.message}}
    else:
        body = {"error": {"message": refusal.message, "type": etype, "param": None, "code": code}}
    headers = {"content-type": "application/json"}
    if refusal.kind == "rate":
        headers["retry-after"] = "1"
    return status, headers, json.dumps(body).encode()
