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

from orchestrator.specs.usage import TokenUsage


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
    #: "model_calls" | "model_tokens" | "model_cost_usd" | "usage_missing" (limits); "in_flight" (rate); "path" |
    #: "method" | "body" | "body_json" | "body_ambiguous" | "unmetered" | "closing" (the request)
    reason: str
    message: str
    status: int
    kind: str          # "limit" (spent), "rate" (flood) or "request" (never forwarded)


def check(limits: ModelLimits, *, calls: int, in_flight: int, usage: TokenUsage, cost: float,
          reserved_tokens: int = 0, reserved_cost: float = 0.0) -> Refusal | None:
    """The refusal for the next call, or None when it may go. `calls` counts calls already let through;
    `usage` and `cost` are what settled calls used, `reserved_*` the worst case of the calls still in flight.

    A limit that settled calls spent is a spent balance (not retried). A limit that only the calls in flight
    could spend is a rate limit (429, retry after 1 s): they may settle well under their worst case. So the
    next call goes only while settled + reserved is under the limit, and however the calls interleave the
    run ends under limit + the largest single reservation (plus what any call used past its reservation)."""
    if limits.calls is not None and calls >= limits.calls:
        return Refusal("model_calls", f"sbx: this run's model_calls limit ({limits.calls}) is spent", 0, "limit")
    if limits.tokens is not None and usage.tokens >= limits.tokens:
        return Refusal("model_tokens", f"sbx: this run's model_tokens limit ({limits.tokens}) is spent "
                       f"({usage.tokens} used)", 0, "limit")
    if limits.cost_usd is not None and cost >= limits.cost_usd:
        return Refusal("model_cost_usd", f"sbx: this run's model_cost_usd limit ({limits.cost_usd:g}) is spent "
                       f"({cost:.4f} used)", 0, "limit")
    if limits.tokens is not None and usage.tokens + reserved_tokens >= limits.tokens:
        return Refusal("in_flight", f"sbx: the model calls in flight could spend this run's model_tokens limit "
                       f"({limits.tokens}: {usage.tokens} used, {reserved_tokens} reserved); retry when they end",
                       429, "rate")
    if limits.cost_usd is not None and cost + reserved_cost >= limits.cost_usd:
        return Refusal("in_flight", f"sbx: the model calls in flight could spend this run's model_cost_usd limit "
                       f"({limits.cost_usd:g}: {cost:.4f} used, {reserved_cost:.4f} reserved); retry when they end",
                       429, "rate")
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
