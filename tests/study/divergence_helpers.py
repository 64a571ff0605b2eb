"""A study in a real ledger whose runs carry what the lifecycle records (seed, config hash, placement, score,
and a gateway transcript in the artifact store), for the paired-analysis tests without Docker."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.artifacts import ArtifactStore
from orchestrator.ledger import Ledger, RunState, ScoreResult
from orchestrator.study.pairs import TRANSCRIPT_KEY

CONFIG = {"model": "m", "budget": {"name": "smoke"}}


@dataclass
class Planted:
    """What one run should look like in the ledger."""

    task: str
    pairing: str
    repeat: int
    seed: int | None = 1
    config: dict[str, Any] = field(default_factory=lambda: dict(CONFIG))
    score: float | None = 0.7
    node: str = "n1"
    slot: int = 0
    transcript: Path | None = None
    status: RunState = RunState.AUDITED
    failure_class: str | None = None
    order: int = 0


def add_run(ledger: Ledger, store: ArtifactStore, study_id: str, p: Planted) -> str:
    """A run of `study_id` taken to `p.status` the way the lifecycle would, with its measurements."""
    from orchestrator.run.config_hash import config_hash

    run_id = ledger.new_run(
        task=p.task,
        agent="scripted",
        budget_name="smoke",
        pairing=p.pairing,
        study_id=study_id,
        repeat=p.repeat,
        meta={"order": p.order},
    )
    meta: dict[str, Any] = {"config": p.config, "config_hash": config_hash(p.config)}
    if p.seed is not None:
        meta["seed"] = p.seed
    ledger.update_measurements(run_id, meta=meta)
    if p.status == RunState.PLANNED:
        return run_id
    ledger.advance(run_id, RunState.STARTING)
    ledger.update_measurements(run_id, node=p.node, slot=p.slot)
    if p.status == RunState.STARTING:
        return run_id
    ledger.advance(run_id, RunState.RUNNING)
    if p.status == RunState.RUNNING:
        return run_id
    if p.failure_class is not None:
        ledger.advance(run_id, RunState.FAILED, failure_class=p.failure_class, reason="planted")
        return run_id
    manifest: dict[str, Any] = {"run_id": run_id}
    if p.transcript is not None:
        manifest[TRANSCRIPT_KEY] = store.put_file(p.transcript)
    ledger.update_measurements(
        run_id, artifact_manifest=store.put_manifest(manifest), delivered_sha256="a" * 64
    )
    ledger.advance(run_id, RunState.DELIVERED)
    ledger.scores.save(run_id, ScoreResult(dataset="holdout", status="scored", auc=p.score, seconds=1.0))
    ledger.advance(run_id, RunState.SCORED)
    ledger.advance(run_id, RunState.AUDITED)
    return run_id
