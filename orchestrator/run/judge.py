"""The lifecycle's judge step (issue 26): after a run is delivered and evaluated, the run's judge (the
study's, else the task's: `RunRequest.judge`) grades it from the task's instruction and the delivered diff.

It runs on the host, after the sandbox is gone: out of the agent's reach. Its one call goes through the
host's gateway on a socket of its own (`<run>.judge.<name>`: the key stays on the host, the call is metered,
priced, limited by the judge's `limit_usd`), its transcript is stored as an artifact, its gateway events are
the run's `judge.*` events, and its verdict and cost are the run's `judge_verdicts` row, apart from the agent's
`model_usage`. On a tests task it runs beside the hidden tests' grading (each verdict has a reference); on a
task without tests its verdict stands alone.

What is judged is what was delivered, as the tests grade it: a run that reached `delivered` (scored,
audited, or an ml run whose delivered code the scorer could not score, `failed/unscorable`) has its diff
judged. A counted run that delivered nothing (`failed/agent`: the agent crashed, broke a limit, or left no
working tree; the tests' `agent_failed`) gets a `not_delivered` row with no call and no cost, so the report
counts it apart instead of dropping it; an attempt that does not count (`failed/infra`, retried; `cancelled`)
gets no row.

Whatever goes wrong with the judge (no gateway, an unknown endpoint, the endpoint down, a refused call, an
answer the parse rule cannot read) is the judge's outcome in its row (verdict NULL), never the run's failure:
the run keeps the state and outcome its evaluation gave it. Only interruptions propagate.
"""

from __future__ import annotations

import difflib
import time
from pathlib import Path

from orchestrator.failures import ConfigError
from orchestrator.gateway.server import check_socket_path
from orchestrator.ledger import FailureClass, RunRecord, RunState
from orchestrator.ledger.judge_verdicts import NOT_DELIVERED, JudgeVerdict
from orchestrator.log import get_logger
from orchestrator.run.context import RunContext
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.scoring.judge import build_prompt, judge_run
from orchestrator.specs.judge import JudgeSpec
from orchestrator.specs.task import TestsTaskSpec

log = get_logger(__name__)

#: the states in which a run has been evaluated as far as it goes (an ml run with no datasets stays delivered)
JUDGED_STATES = (RunState.SCORED, RunState.AUDITED)
#: a file larger than this is named in the diff, not shown (the prompt is bounded anyway; reading a model
#: file the agent wrote would only cost time)
MAX_FILE_BYTES = 1024 * 1024
_SKIP = (".git", "__pycache__", ".pytest_cache")


def _files(root: Path) -> set[str]:
    if not root.is_dir():
        return set()
    return {p.relative_to(root).as_posix() for p in root.rglob("*")
            if p.is_file() and not p.is_symlink() and not _SKIP_PARTS.intersection(p.relative_to(root).parts)}


_SKIP_PARTS = frozenset(_SKIP)


def _text(path: Path) -> list[str] | None:
    """The file's lines, [] when absent, None when it is not UTF-8 text."""
    if not path.is_file():
        return []
    try:
        return path.read_text(encoding="utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def tree_diff(before: Path, after: Path, max_bytes: int) -> str:
    """A unified diff (`a/`, `b/`) from the starting tree to the delivered one, file by file in path order,
    stopped once it passes `max_bytes` (the judge's own bound cuts it exactly and says so)."""
    out: list[str] = []
    size = 0
    for rel in sorted(_files(before) | _files(after)):
        a, b = before / rel, after / rel
        if a.is_file() and b.is_file() and a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes():
            continue
        if max(a.stat().st_size if a.is_file() else 0, b.stat().st_size if b.is_file() else 0) > MAX_FILE_BYTES:
            chunk = f"--- a/{rel}\n+++ b/{rel}\n[file over {MAX_FILE_BYTES} bytes: changed, not shown]\n"
        else:
            old, new = _text(a), _text(b)
            if old is None or new is None:
                chunk = f"Binary files a/{rel} and b/{rel} differ\n"
            else:
                chunk = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                                for line in difflib.unified_diff(old, new, "/dev/null" if not a.is_file() else f"a/{rel}",
                                                                 "/dev/null" if not b.is_file() else f"b/{rel}"))
        out.append(chunk)
        size += len(chunk.encode())
        if size > max_bytes:
            break
    return "".join(out)


def instruction_of(ctx: RunContext) -> str:
    """What the agent was asked: a tests task's instruction file, an ml task's description."""
    task = ctx.request.task
    if isinstance(task, TestsTaskSpec):
        return task.path(task.instruction).read_text(encoding="utf-8", errors="replace")
    return task.description


def delivered(run: RunRecord) -> bool:
    """Whether the run delivered something the tests (or the scorer) took: it reached `delivered`."""
    return run.status in JUDGED_STATES or (run.status == RunState.FAILED
                                           and run.failure_class == FailureClass.UNSCORABLE)


def needs_judge(ctx: RunContext) -> bool:
    """Whether the run has a judge whose row is not in the ledger yet, and has ended as far as its judge is
    concerned: evaluated, or a counted failure (judged when it delivered, else recorded as not delivered)."""
    spec = ctx.request.judge
    run = ctx.ledger.get_run(ctx.run_id)
    if spec is None or not (run.status in JUDGED_STATES or (run.status == RunState.FAILED and run.counted)):
        return False
    return not any(v.judge == spec.name for v in ctx.ledger.judges.of_runs([ctx.run_id]))


def not_delivered(ctx: RunContext, spec: JudgeSpec) -> JudgeVerdict:
    """The row of a counted run that delivered nothing: no call, no cost, outcome `not_delivered`."""
    row = JudgeVerdict(ctx.run_id, spec.name, spec.endpoint, spec.model, None, NOT_DELIVERED, 0, False, 0, 0, None,
                       None, time.time(), spec_sha256=spec.digest())
    ctx.ledger.judges.save(row)
    ctx.event("judged", {"judge": spec.name, "verdict": None, "outcome": NOT_DELIVERED, "cost_usd": None,
                         "diff_bytes": 0, "diff_cut": False})
    return row


def judge_delivered(ctx: RunContext, gateway: GatewayHost | None) -> JudgeVerdict:
    """Grade the run's delivery with its judge and store the verdict; a judge failure is its outcome. A run
    that delivered nothing gets its `not_delivered` row."""
    spec = ctx.request.judge
    assert spec is not None
    if not delivered(ctx.ledger.get_run(ctx.run_id)):
        return not_delivered(ctx, spec)
    transcript = ctx.run_dir / f"judge-{spec.name}.jsonl.gz"
    diff_bytes, diff_cut = 0, False
    verdict, outcome, tokens, cost, error = None, "error", {}, None, None
    try:
        if gateway is None:
            raise ConfigError(f"judge {spec.name}: no model gateway for this run (give --endpoints)")
        endpoint = gateway.endpoints.get(spec.endpoint)
        if endpoint is None:
            raise ConfigError(f"judge {spec.name}: no endpoint named {spec.endpoint!r} in the gateway's endpoints")
        diff = tree_diff(ctx.request.task.repo_dir, ctx.home.delivered_dir(ctx.run_id) / "workspace",
                         spec.max_diff_bytes)
        instruction = instruction_of(ctx)
        prompt = build_prompt(spec, instruction, diff)  # its size, for the row, also when the call fails
        diff_bytes, diff_cut = prompt.diff_bytes, prompt.diff_cut
        call = judge_run(gateway, spec, endpoint.api, ctx.run_id, instruction, diff, transcript,
                         seed=ctx.request.seed, on_event=lambda kind, fields: ctx.event(f"judge.{kind}", fields))
        verdict = None if call.passed is None else ("pass" if call.passed else "fail")
        outcome, tokens, cost = call.outcome, call.usage, call.cost_usd
    except Exception as exc:  # noqa: BLE001 - the judge's failure is its outcome, never the run's
        error = f"{type(exc).__name__}: {exc}"[:1000]
        log.warning("judge.error", run_id=ctx.run_id, judge=spec.name, error=error)
    sha = ctx.store.put_file(transcript) if transcript.is_file() else None  # the row names it
    row = JudgeVerdict(ctx.run_id, spec.name, spec.endpoint, spec.model, verdict, outcome, diff_bytes, diff_cut,
                       int(tokens.get("input", 0)), int(tokens.get("output", 0)), cost, sha, time.time(),
                       spec_sha256=spec.digest())
    ctx.ledger.judges.save(row)
    ctx.event("judged", {"judge": spec.name, "verdict": verdict, "outcome": outcome, "cost_usd": cost,
                         "diff_bytes": diff_bytes, "diff_cut": diff_cut, **({"error": error} if error else {})})
    return row


def judge_id(run_id: str, spec: JudgeSpec) -> str:
    """The gateway's run id of the judge's calls (scoring/judge.py: its socket, transcript and run header)."""
    return f"{run_id}.judge.{spec.name}"


def check_judge(spec: JudgeSpec, gateway: GatewayHost | None, run_id: str) -> None:
    """The judge's side of `prepare`: a gateway, an endpoint that serves its model with a rate card, and a
    socket path that fits. A ConfigError names the fix before the run starts (a judge cannot price its calls
    without a card; a unix socket's path is at most 107 bytes, and a long judge name is part of it)."""
    import datetime as dt

    if gateway is None:
        raise ConfigError(f"judge {spec.name}: its calls go through the model gateway; the run has none "
                          "(RunLifecycle(..., gateway=GatewayHost.from_files(...)); `sbx run --endpoints FILE`)")
    try:
        gateway.check(spec.endpoint, spec.model, dt.datetime.now(dt.UTC).date())
    except ConfigError as exc:
        raise ConfigError(f"judge {spec.name}: {exc}") from None
    try:
        check_socket_path(gateway.own_socket(judge_id(run_id, spec)), "its socket path")
    except ConfigError as exc:
        raise ConfigError(f"judge {spec.name}: {exc}; give the judge a shorter name") from None
