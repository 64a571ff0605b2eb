"""The run state machine, checked over every pair of states, both as the pure rule and through the ledger."""

from __future__ import annotations

import itertools

import pytest
from structlog.testing import capture_logs

from orchestrator.failures import IllegalTransition
from orchestrator.ledger import NEXT, FailureClass, Ledger, RunState, transition
from orchestrator.ledger.state import FAILURE_FROM, TERMINAL
from tests.ledger.ledger_helpers import drive, plan

S = RunState
ALL_PAIRS = list(itertools.product(RunState, RunState))
LEGAL = {
    (S.PLANNED, S.STARTING), (S.PLANNED, S.FAILED), (S.PLANNED, S.CANCELLED),
    (S.STARTING, S.RUNNING), (S.STARTING, S.FAILED), (S.STARTING, S.CANCELLED),
    (S.RUNNING, S.DELIVERED), (S.RUNNING, S.FAILED), (S.RUNNING, S.CANCELLED),
    (S.DELIVERED, S.SCORED), (S.DELIVERED, S.FAILED),
    (S.SCORED, S.AUDITED),
}  # fmt: skip


def _failure_kwargs(current: RunState, to: RunState) -> dict[str, str]:
    """A failure class that may start from `current` (infra if none may), for moves to failed."""
    if to is not S.FAILED:
        return {}
    cls = next((c for c in FailureClass if current in FAILURE_FROM[c]), FailureClass.INFRA)
    return {"failure_class": cls, "reason": "something broke"}


def test_next_is_exactly_the_designed_table() -> None:
    assert {(a, b) for a, targets in NEXT.items() for b in targets} == LEGAL
    assert set(NEXT) == set(RunState)
    assert TERMINAL == {S.AUDITED, S.FAILED, S.CANCELLED}


@pytest.mark.parametrize(("current", "to"), ALL_PAIRS, ids=[f"{a}->{b}" for a, b in ALL_PAIRS])
def test_transition_rule_over_all_pairs(current: RunState, to: RunState) -> None:
    kwargs = _failure_kwargs(current, to)
    if (current, to) in LEGAL:
        move = transition(current, to, **kwargs)
        assert (move.from_state, move.to_state) == (current, to)
    else:
        with pytest.raises(IllegalTransition) as exc:
            transition(current, to, **kwargs)
        assert (exc.value.current, exc.value.target) == (current, to)
        assert f"{current} -> {to}" in str(exc.value)


@pytest.mark.parametrize(("current", "to"), ALL_PAIRS, ids=[f"{a}->{b}" for a, b in ALL_PAIRS])
def test_ledger_advance_over_all_pairs(ledger: Ledger, current: RunState, to: RunState) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, current)
    events_before = len(ledger.events(run_id))
    kwargs = _failure_kwargs(current, to)
    if (current, to) in LEGAL:
        record = ledger.advance(run_id, to, **kwargs)
        assert record.status is to
        assert ledger.get_run(run_id).status is to
        last = ledger.events(run_id)[-1]
        assert (last.kind, last.detail["from"], last.detail["to"]) == ("transition", current, to)
    else:
        with pytest.raises(IllegalTransition):
            ledger.advance(run_id, to, **kwargs)
        assert ledger.get_run(run_id).status is current  # nothing written
        assert len(ledger.events(run_id)) == events_before


@pytest.mark.parametrize(
    ("current", "cls"),
    list(itertools.product([S.STARTING, S.RUNNING, S.DELIVERED], FailureClass)),
    ids=lambda v: str(v),
)
def test_each_failure_class_starts_only_where_it_can_happen(
    ledger: Ledger, current: RunState, cls: FailureClass
) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, current)
    if current in FAILURE_FROM[cls]:
        record = ledger.advance(run_id, S.FAILED, failure_class=cls, reason="why")
        assert (record.failure_class, record.failure_reason) == (cls, "why")
    else:
        with pytest.raises(IllegalTransition, match=f"fails as {cls} only from"):
            ledger.advance(run_id, S.FAILED, failure_class=cls, reason="why")


def test_agent_fails_only_while_running_and_unscorable_only_once_delivered() -> None:
    assert FAILURE_FROM[FailureClass.AGENT] == {S.RUNNING}
    assert FAILURE_FROM[FailureClass.UNSCORABLE] == {S.DELIVERED}
    # a planned run whose fleet node was lost before it started fails as infra from planned
    assert FAILURE_FROM[FailureClass.INFRA] == {S.PLANNED, S.STARTING, S.RUNNING, S.DELIVERED}


@pytest.mark.parametrize(
    "kwargs", [{}, {"failure_class": "agent"}, {"reason": "x"}, {"failure_class": "agent", "reason": " "}]
)
def test_failed_needs_a_class_and_a_reason(ledger: Ledger, kwargs: dict[str, str]) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, S.RUNNING)
    with pytest.raises(IllegalTransition, match="a failure class and a reason are required"):
        ledger.advance(run_id, S.FAILED, **kwargs)
    assert ledger.get_run(run_id).status is S.RUNNING


def test_a_failure_class_on_another_move_is_refused(ledger: Ledger) -> None:
    run_id = plan(ledger)
    with pytest.raises(IllegalTransition, match="only for a move to failed"):
        ledger.advance(run_id, S.STARTING, failure_class="infra", reason="x")


def test_an_unknown_failure_class_or_state_is_a_value_error(ledger: Ledger) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, S.RUNNING)
    with pytest.raises(ValueError):
        ledger.advance(run_id, S.FAILED, failure_class="gremlins", reason="x")
    with pytest.raises(ValueError):
        ledger.advance(run_id, "finished")


@pytest.mark.parametrize(("cls", "counted"), [(FailureClass.INFRA, False), (FailureClass.AGENT, True)])
def test_infra_failure_is_not_counted_agent_failure_is(
    ledger: Ledger, cls: FailureClass, counted: bool
) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, S.RUNNING)
    assert ledger.get_run(run_id).counted is True
    record = ledger.advance(run_id, "failed", failure_class=str(cls), reason="boom")
    assert record.counted is counted
    assert record.status is S.FAILED and record.failure_class is cls


def test_unscorable_counts_as_a_failed_attempt(ledger: Ledger) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, S.DELIVERED)
    record = ledger.advance(
        run_id, S.FAILED, failure_class=FailureClass.UNSCORABLE, reason="predict_proba raised"
    )
    assert record.counted is True and record.failure_class is FailureClass.UNSCORABLE


def test_cancelled_is_not_counted(ledger: Ledger) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, S.RUNNING)
    record = ledger.advance(run_id, S.CANCELLED, reason="study stopped by the user")
    assert record.counted is False and record.failure_class is None and record.failure_reason is None
    assert ledger.events(run_id)[-1].detail["reason"] == "study stopped by the user"


def test_started_at_and_ended_at_follow_the_sandbox_phase(ledger: Ledger) -> None:
    run_id = plan(ledger)
    assert ledger.get_run(run_id).started_at is None
    drive(ledger, run_id, S.RUNNING)
    started = ledger.get_run(run_id).started_at
    assert started is not None and ledger.get_run(run_id).ended_at is None
    ended = ledger.advance(run_id, S.DELIVERED).ended_at
    assert ended is not None and ended >= started
    ledger.advance(run_id, S.FAILED, failure_class="unscorable", reason="crash at scoring")
    assert ledger.get_run(run_id).ended_at == ended  # the sandbox phase ended at delivery


def test_each_transition_is_logged(ledger: Ledger) -> None:
    run_id = plan(ledger)
    with capture_logs() as logs:
        ledger.advance(run_id, S.STARTING)
        ledger.advance(run_id, S.FAILED, failure_class="infra", reason="engine gone")
    moves = [e for e in logs if e["event"] == "run.transition"]
    assert [(e["run_id"], e["from_state"], e["to_state"]) for e in moves] == [
        (run_id, "planned", "starting"),
        (run_id, "starting", "failed"),
    ]
    assert moves[1]["failure_class"] == "infra" and moves[1]["reason"] == "engine gone"


def test_an_illegal_move_is_not_logged(ledger: Ledger) -> None:
    run_id = plan(ledger)
    with capture_logs() as logs, pytest.raises(IllegalTransition):
        ledger.advance(run_id, S.AUDITED)
    assert not [e for e in logs if e["event"] == "run.transition"]


def test_illegal_transition_is_a_runtime_error_with_the_states() -> None:
    with pytest.raises(RuntimeError) as exc:
        transition("audited", "scored")
    assert isinstance(exc.value, IllegalTransition)
    assert "the run is finished" in str(exc.value)
