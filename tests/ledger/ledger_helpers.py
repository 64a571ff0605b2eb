"""Helpers shared by the ledger tests (a uniquely named module, importable from tests/ledger)."""

from __future__ import annotations

from orchestrator.ledger import Ledger, RunState

S = RunState

#: moves that bring a fresh (planned) run to each state
PATH: dict[RunState, list[tuple[RunState, dict[str, str]]]] = {
    S.PLANNED: [],
    S.STARTING: [(S.STARTING, {})],
    S.RUNNING: [(S.STARTING, {}), (S.RUNNING, {})],
    S.DELIVERED: [(S.STARTING, {}), (S.RUNNING, {}), (S.DELIVERED, {})],
    S.SCORED: [(S.STARTING, {}), (S.RUNNING, {}), (S.DELIVERED, {}), (S.SCORED, {})],
    S.AUDITED: [(S.STARTING, {}), (S.RUNNING, {}), (S.DELIVERED, {}), (S.SCORED, {}), (S.AUDITED, {})],
    S.FAILED: [(S.STARTING, {}), (S.FAILED, {"failure_class": "infra", "reason": "daemon gone"})],
    S.CANCELLED: [(S.CANCELLED, {})],
}


def drive(ledger: Ledger, run_id: str, state: RunState) -> None:
    for to, kwargs in PATH[state]:
        ledger.advance(run_id, to, **kwargs)
    assert ledger.get_run(run_id).status is state


def plan(ledger: Ledger, **kwargs: object) -> str:
    values: dict[str, object] = {"task": "flight-delays", "agent": "noop", "budget_name": "smoke"} | kwargs
    return ledger.new_run(**values)  # type: ignore[arg-type]


def write_events_in_a_process(path: str, run_id: str, worker: int, count: int, barrier: object) -> None:
    """A multiprocessing target: open the ledger in this process and write `count` events and experiments."""
    with Ledger(path) as led:
        barrier.wait()  # type: ignore[attr-defined]
        for i in range(count):
            led.add_event(run_id, "tick", {"worker": worker, "i": i})
            if i % 10 == 0:
                led.add_experiment(run_id, status="ok", note=f"{worker}-{i}")
