"""`Ledger.batch()`: the writes inside the block are one transaction, committed together or not at all; a
call that fails inside it is undone alone (a savepoint), so the block's other writes stand."""

from __future__ import annotations

import pytest

from orchestrator.failures import IllegalTransition, InvalidLedgerWrite
from orchestrator.ledger import Ledger, RunState


def _new(ledger: Ledger, study: str, repeat: int) -> str:
    return ledger.new_run(task="t", agent="noop", budget_name="smoke", study_id=study, repeat=repeat)


def test_a_batch_commits_once(ledger: Ledger) -> None:
    study = ledger.create_study("b")
    seen: list[str] = []
    ledger._connection().set_trace_callback(seen.append)
    with ledger.batch():
        ids = [_new(ledger, study, r) for r in range(1, 6)]
        ledger.advance(ids[0], RunState.STARTING)
        assert ledger.get_run(ids[0]).status == RunState.STARTING  # its reads see its writes
        with ledger.batch():  # a nested block joins the outer one
            _new(ledger, study, 6)
    ledger._connection().set_trace_callback(None)
    assert seen.count("BEGIN IMMEDIATE") == 1 and seen.count("COMMIT") == 1
    assert len(ledger.list_runs(study_id=study)) == 6


def test_a_batch_that_raises_writes_nothing(ledger: Ledger) -> None:
    study = ledger.create_study("b")
    with pytest.raises(RuntimeError), ledger.batch():
        for r in range(1, 4):
            _new(ledger, study, r)
        raise RuntimeError("the driver stops here")
    assert ledger.list_runs(study_id=study) == []
    _new(ledger, study, 1)  # the ledger writes as before after it
    assert len(ledger.list_runs(study_id=study)) == 1


def test_a_failed_call_inside_a_batch_is_undone_alone(ledger: Ledger) -> None:
    study = ledger.create_study("b")
    with ledger.batch():
        first = _new(ledger, study, 1)
        with pytest.raises(InvalidLedgerWrite):
            _new(ledger, study, 1)  # the same (task, pairing, repeat) again
        with pytest.raises(IllegalTransition):
            ledger.advance(first, RunState.AUDITED)  # not a transition from planned
        _new(ledger, study, 2)
    runs = ledger.list_runs(study_id=study)
    assert [(r.repeat, r.status) for r in runs] == [(1, RunState.PLANNED), (2, RunState.PLANNED)]
    assert "transition" not in [e.kind for e in ledger.events(first)]
