"""A ledger with a study whose runs delivered given train.py files, laid out as a run's copy-out is."""

from __future__ import annotations

import hashlib

from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunState


def deliver(home: Home, ledger: Ledger, study_id: str, source: str | None, *, keep_file: bool = True) -> str:
    """A run of `study_id` that delivered `source` as its committed train.py (None: delivered nothing)."""
    run_id = ledger.new_run(task="flight-delays", agent="noop", budget_name="smoke", study_id=study_id)
    ledger.advance(run_id, RunState.STARTING)
    ledger.advance(run_id, RunState.RUNNING)
    if source is None:
        ledger.advance(run_id, RunState.FAILED, failure_class="agent", reason="agent_crashed: exit 1")
        return run_id
    sha = hashlib.sha256(source.encode()).hexdigest()
    if keep_file:
        path = home.delivered_dir(run_id) / "git" / "train" / f"{sha}.py"
        path.parent.mkdir(parents=True)
        path.write_text(source)
    ledger.update_measurements(run_id, delivered_sha256=sha)
    ledger.advance(run_id, RunState.DELIVERED)
    return run_id
