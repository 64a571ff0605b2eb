"""The model gateway as a per-run sandbox attachment (run/sandbox_phase.py).

    start        the host's gateway serves the run on `model.sock` in the run's socket folder (mounted
                 read-only at /run/sbx in this sandbox only; as root the socket belongs to the forwarder's
                 uid, mode 0600); the forwarder starts in the sandbox as `sbxfwd` before the agent and
                 exposes it as http://127.0.0.1:4000; the agent gets the model's environment (a CLI
                 agent: its adapter's, with a dummy key)
    agent_ended  a CLI agent's own usage report is read out of the sandbox (its stdout copy and report
                 files, bounded, as the agent user); a run whose last model call failed on the provider's
                 side ends here as `ProviderFailure` (infra: kept uncounted, retried by a study)
    stop         the socket closes (calls in flight get a grace period); the transcript goes to the
                 artifact store and into the run's manifest; the ledger gets the gateway's counts, tokens
                 and cost, the agent version, endpoint and rate card, and the CLI's report beside them

Limits come from the budget (`model_calls`, `model_tokens`, `model_cost_usd`); every refusal and provider
error is an event of the run (`model.refused`, `model.provider_error`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import docker.errors

from orchestrator.agents.adapters import get_adapter
from orchestrator.agents.adapters.protocol import STDOUT_COPY
from orchestrator.agents.adapters.reports import collect_reports
from orchestrator.failures import InfraError, ProviderFailure
from orchestrator.gateway import forwarder, reach
from orchestrator.gateway.limits import ModelLimits
from orchestrator.gateway.server import SOCKET_NAME, RunTotals
from orchestrator.ledger import ModelUsage
from orchestrator.log import get_logger
from orchestrator.run.context import RunContext
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.run.model_plan import PORT, STDOUT_KEEP, ModelPlan
from orchestrator.run.watchdog import Stop
from orchestrator.sandbox.docker import SOCK_MOUNT, DockerSandbox
from orchestrator.specs.endpoints import Endpoint

log = get_logger(__name__)

TRANSCRIPT = "transcript.jsonl.gz"
#: outcomes of a last call that mean the run ended on its provider, not on its agent
PROVIDER_OUTCOMES = ("provider_error", "upstream_timeout")
#: report files read back from the sandbox, at most (the stdout copy is at most STDOUT_KEEP)
REPORTS_CAP = 64 * 1024 * 1024
_AGENT_LOG_TAIL = 16 * 1024 * 1024


def usage_record(plan: ModelPlan, totals: RunTotals | None, *, transcript_sha256: str | None = None,
                 self_report: dict[str, Any] | None = None, closed: bool = False) -> ModelUsage:
    """The ledger's row for a run's model usage from the gateway's totals (None: nothing measured yet)."""
    base = ModelUsage(endpoint=plan.endpoint, api=plan.api, model=plan.model, agent_version=plan.agent_version,
                      rate_card_date=plan.rate_card_date.isoformat(), transcript_sha256=transcript_sha256,
                      self_report=self_report or {}, closed=closed)
    if totals is None:
        return base
    u = totals.usage
    return dataclasses.replace(
        base, calls=totals.calls, ok=totals.ok, refused=totals.refused, provider_errors=totals.provider_errors,
        client_errors=totals.client_errors, upstream_timeouts=totals.upstream_timeouts,
        usage_missing=totals.usage_missing, unpriced=totals.unpriced, input_tokens=u.input,
        cached_input_tokens=u.cached_input, cache_write_tokens=u.cache_write, output_tokens=u.output,
        reasoning_tokens=u.reasoning, cost_usd=totals.cost_usd if totals.unpriced == 0 else None,
        last_outcome=totals.last_outcome,
    )


def provider_failure_message(endpoint: str, ep: Endpoint | None, totals: RunTotals, agent_stop: str) -> str:
    """Why a run ended on its provider, cause first, in words a person can act on: which endpoint, at which
    address, what the last call's error was, and for an endpoint that took no connection the fix (the run's
    last line and its failure reason in the ledger). `ep` is the endpoint's config (None: not known here)."""
    failed = totals.provider_errors + totals.upstream_timeouts
    at = f" at {ep.base_url}" if ep is not None else ""
    error = totals.last_error or totals.last_outcome or "unknown"
    fix = ""
    if error.startswith("upstream connection failed"):
        what = f"endpoint {endpoint}{at} did not answer"
        if ep is not None:  # the same advice as `sbx study plan` gives for it (gateway/reach.py)
            fix = f": {reach.fix_for(ep)}"
    elif totals.last_outcome == "upstream_timeout":
        what = f"endpoint {endpoint}{at} did not answer in time"
    else:
        what = f"endpoint {endpoint}{at} answered with errors"
    return (f"{what} ({error}){fix}; {failed} of {totals.calls} calls failed, the last with {totals.last_outcome}; "
            f"the agent stopped with {agent_stop}")


class ModelAttachment:
    name = "model"

    def __init__(self, gateway: GatewayHost, plan: ModelPlan) -> None:
        self.gateway, self.plan = gateway, plan
        self.ctx: RunContext | None = None
        self.self_report: dict[str, Any] | None = None
        self._open = False

    # --- the Attachment protocol ------------------------------------------------------------------------

    def start(self, ctx: RunContext, sandbox: DockerSandbox, sock_dir: Any) -> dict[str, str]:
        self.ctx = ctx
        plan, req = self.plan, ctx.request
        limits = ModelLimits.from_budget(req.budget)
        host_socket = self.gateway.open_run(
            ctx.run_id, plan.endpoint, plan.model, limits, ctx.run_dir / TRANSCRIPT,
            socket_path=sock_dir / SOCKET_NAME, seed=req.seed, run_date=plan.run_date, on_event=ctx.event)
        self._open = True
        ctx.ledger.usage.save(ctx.run_id, usage_record(plan, None))
        assert sandbox.box is not None
        forwarder.start(sandbox.box.container, host_socket, port=PORT, inside=f"{SOCK_MOUNT}/{SOCKET_NAME}")
        ctx.event("model.opened", {"endpoint": plan.endpoint, "api": plan.api, "model": plan.model,
                                   "agent_version": plan.agent_version, "rate_card": plan.rate_card_date.isoformat(),
                                   "limits": {"calls": limits.calls, "tokens": limits.tokens,
                                              "cost_usd": limits.cost_usd, "in_flight": limits.in_flight}})
        return self.plan.env()

    def agent_ended(self, sandbox: DockerSandbox, stop: Stop) -> None:
        """Read the CLI's own report while the sandbox still runs; end a run that ended on its provider."""
        assert self.ctx is not None
        if self.plan.launch is not None and sandbox.box is not None:
            self.self_report = self._read_report(sandbox)
        totals = self.gateway.totals(self.ctx.run_id)
        if totals.last_outcome in PROVIDER_OUTCOMES:
            raise ProviderFailure(provider_failure_message(self.plan.endpoint,
                                                           self.gateway.endpoints.get(self.plan.endpoint), totals,
                                                           stop.reason.value))

    def stop(self) -> dict[str, Any]:
        if not self._open or self.ctx is None:
            return {}
        self._open = False
        ctx = self.ctx
        totals = self.gateway.close_run(ctx.run_id)
        transcript = ctx.run_dir / TRANSCRIPT
        sha = ctx.store.put_file(transcript) if transcript.is_file() else None
        if sha is not None:
            ctx.artifacts["model_transcript_sha256"] = sha
        if self.self_report is None and self.plan.launch is not None:
            self.self_report = self._report_from_log()
        ctx.ledger.usage.save(ctx.run_id, usage_record(self.plan, totals, transcript_sha256=sha,
                                                             self_report=self.self_report, closed=True))
        ctx.event("model.closed", {"calls": totals.calls, "ok": totals.ok, "refused": totals.refused,
                                   "provider_errors": totals.provider_errors, "cost_usd": round(totals.cost_usd, 6),
                                   "tokens": totals.usage.as_dict()})
        return {"model_calls": totals.calls, "model_cost_usd": round(totals.cost_usd, 6)}

    # --- the CLI's own report -----------------------------------------------------------------------------

    def _read_report(self, sandbox: DockerSandbox) -> dict[str, Any] | None:
        launch = self.plan.launch
        assert launch is not None and sandbox.box is not None and self.ctx is not None
        wanted = dataclasses.replace(launch, reports=(*launch.reports, STDOUT_COPY))
        try:
            files = collect_reports(sandbox.box.container, wanted, cap_bytes=REPORTS_CAP + STDOUT_KEEP)
        except (docker.errors.DockerException, InfraError, OSError) as exc:
            log.warning("model.report_unreadable", run_id=self.ctx.run_id, error=str(exc)[:300])
            return None
        stdout = files.pop(STDOUT_COPY, None)
        if stdout is None:
            return None
        return self._parse(stdout, files, source="stdout copy")

    def _report_from_log(self) -> dict[str, Any] | None:
        """Fallback when the stdout copy could not be read: the agent's log (stdout and stderr mixed)."""
        assert self.ctx is not None
        path = self.ctx.run_dir / "agent.log"
        if not path.is_file():
            return None
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - _AGENT_LOG_TAIL))
            data = f.read()
        return self._parse(data, {}, source="agent log")

    def _parse(self, stdout: bytes, files: dict[str, bytes], *, source: str) -> dict[str, Any]:
        assert self.plan.launch is not None and self.ctx is not None
        report = get_adapter(self.ctx.request.agent.name).parse_usage(stdout, files)
        return {**dataclasses.asdict(report), "read_from": source, "files": sorted(files)[:20]}


__all__ = ["PROVIDER_OUTCOMES", "TRANSCRIPT", "ModelAttachment", "provider_failure_message", "usage_record"]
