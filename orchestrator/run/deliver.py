"""Copy-out: what a stopped sandbox delivered, taken out safely and recorded.

The workspace volume is read by a copier container (sandbox/copyout.py); every version of train.py, the
git bundle and the agent's log land in the artifact store under a per-run manifest; then the run moves to
`delivered`, or to `failed` when the stop was the agent's failure or nothing was committed (an ml task) /
no working tree came out (a tests task: its working tree is what gets graded, committed or not).

A copy-out that fails or runs past its time limit is the agent's outcome when sbx can show its own side
works: the same copy, with the same limits, of a fresh empty volume (the control) succeeds. The workspace
is then what made it fail, and the run ends `failed/agent` with `copyout_timeout` or `copyout_failed`
(counted: an agent cannot void an attempt it dislikes by filling its workspace). When the control fails
too, the engine or sbx is at fault: the error propagates and the attempt is `failed/infra` (retried).
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from pathlib import Path

from orchestrator.failures import CopyOutError, CopyOutTimeout
from orchestrator.ledger import RunState
from orchestrator.log import get_logger
from orchestrator.run.config_hash import tree_sha256
from orchestrator.run.context import RunContext
from orchestrator.run.watchdog import OUTCOME, Stop
from orchestrator.sandbox.container import (
    LABEL_KIND,
    LABEL_OWNER,
    LABEL_RUN,
    LABEL_STUDY,
    engine_errors,
    owner_label,
)
from orchestrator.sandbox.copyout import CopierAhead, CopyLimits, CopyOutResult, copy_out_workspace

log = get_logger(__name__)

_NOT_KEPT = ("dest_dir", "workspace_dir", "train_dir", "bundle_path")


def control_copy(ctx: RunContext, image: str, limits: CopyLimits) -> float:
    """Copy a fresh, empty volume out the same way, with the same limits; its seconds. Raises what the copy
    raises: then our side (the engine, the image, the copier) cannot copy even nothing."""
    study = ctx.request.study_id or ""
    name = f"sbx-ctl-{ctx.run_id[-8:]}-{uuid.uuid4().hex[:6]}"
    labels = {LABEL_KIND: "control", LABEL_RUN: ctx.run_id, LABEL_STUDY: study, LABEL_OWNER: owner_label()}
    with engine_errors("creating the control volume"):
        volume = ctx.client.volumes.create(name, labels=labels)
    dest = Path(tempfile.mkdtemp(prefix="sbx-ctl-"))
    start = time.monotonic()
    try:
        copy_out_workspace(ctx.client, name, dest / "out", image=image, limits=limits, run_id=ctx.run_id,
                           study_id=study)
        return round(time.monotonic() - start, 3)
    finally:
        shutil.rmtree(dest, ignore_errors=True)
        for _ in range(10):
            try:
                volume.remove(force=True)
                break
            except Exception:  # noqa: BLE001 - the copier may still hold it for a moment
                time.sleep(0.3)


def _copy(ctx: RunContext, volume_name: str, image: str, ahead: CopierAhead | None) -> CopyOutResult | None:
    """The copy-out, or None when it failed because of the workspace (the run is then failed/agent)."""
    req = ctx.request
    try:
        return copy_out_workspace(ctx.client, volume_name, ctx.home.delivered_dir(ctx.run_id), image=image,
                                  limits=req.copy_limits, run_id=ctx.run_id, study_id=req.study_id or "",
                                  ahead=ahead)
    except CopyOutError as exc:
        reason = "copyout_timeout" if isinstance(exc, CopyOutTimeout) else "copyout_failed"
        log.warning("run.copyout_failed", run_id=ctx.run_id, reason=reason, error=str(exc)[:500])
        try:
            seconds = control_copy(ctx, image, req.copy_limits)
        except Exception as control:  # our side cannot copy an empty volume either: not the agent's doing
            ctx.event("copyout_failed", {"reason": reason, "error": str(exc)[:2000],
                                         "control": f"failed: {type(control).__name__}: {control}"[:2000]})
            raise exc from None
        ctx.event("copyout_failed", {"reason": reason, "error": str(exc)[:2000], "control_seconds": seconds,
                                     "limit_s": req.copy_limits.timeout_s})
        ctx.ledger.advance(ctx.run_id, RunState.FAILED, failure_class="agent",
                           reason=f"{reason}: {exc} (an empty workspace copied out in {seconds:.1f}s with the same "
                                  f"limits: what the workspace holds made it fail)")
        return None


def deliver(ctx: RunContext, volume_name: str, image: str, stop: Stop, ahead: CopierAhead | None = None) -> None:
    """Copy out (with `ahead`, the copier started while the sandbox stopped), store, and move the run on."""
    req, store = ctx.request, ctx.store
    result = _copy(ctx, volume_name, image, ahead)
    if result is None:
        return
    versions = {commit: store.put_file(result.train_path(sha)) for commit, sha in result.train_versions.items()
                if result.train_path(sha).is_file()}
    agent_log = ctx.run_dir / "agent.log"
    manifest = {
        "run_id": ctx.run_id,
        "copy_out": {k: v for k, v in result.to_json().items() if k not in _NOT_KEPT},
        "train_versions": versions,
        "delivered_train_sha256": result.delivered_sha256,
        "worktree_train_sha256": result.worktree_train_sha256,
        "bundle_sha256": store.put_file(result.bundle_path) if result.bundle_path else None,
        "agent_log_sha256": store.put_file(agent_log) if agent_log.exists() else None,
        **ctx.artifacts,  # what attachments stored (the model transcript)
    }
    # what is evaluated: an ml task's committed train.py; a tests task's working tree (hashed whole)
    delivered = result.delivered_sha256 if req.task.kind == "ml" else tree_sha256(result.workspace_dir)
    ctx.ledger.update_measurements(ctx.run_id, delivered_sha256=delivered, commits=result.commits,
                                   artifact_manifest=store.put_manifest(manifest))
    if result.skipped_counts:
        ctx.event("copyout_skipped", {"counts": dict(result.skipped_counts), "truncated": result.truncated,
                                      "first": [s.path for s in result.skipped[:20]]})
    failure = OUTCOME[stop.reason]
    if failure is None and delivered is None:
        what = "no committed train.py" if req.task.kind == "ml" else "no working tree"
        failure, stop = "agent", Stop(stop.reason, f"{what} was delivered")
    if failure is None:
        ctx.ledger.advance(ctx.run_id, RunState.DELIVERED)
    else:
        ctx.ledger.advance(ctx.run_id, RunState.FAILED, failure_class=failure, reason=f"{stop.reason.value}: {stop.detail}")
