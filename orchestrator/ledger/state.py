"""The run state machine: the states a run (one attempt) passes through and the moves between them.

    planned -> starting -> running -> delivered -> scored -> audited
       |           |          |           |
       +-----------+----------+--> cancelled   (planned, starting, running)
       +-----------+----------+-----------+--> failed (with a failure class and a reason)

`transition` is the pure rule: it checks one move and says what it changes. `Ledger.advance` is the only
code that writes a run's state, and it writes exactly what `transition` returns.

Decisions worth knowing:

- Re-scoring a delivered artifact on another data set (a later period) adds score rows; it is not a
  state change. So `scored` has no self loop and `audited` is terminal: the run's attempt is over, its
  scores can still grow.
- An audit that finds a rule break is a verdict recorded by the audit, not a failure of the run:
  `scored -> audited` whatever the verdict; there is no `scored -> failed`.
- `delivered` cannot be cancelled: the artifact exists, and a cancelled study leaves it to be scored later.
- Each failure class can only start from the states where it can happen (`FAILURE_FROM`): the agent
  only fails while it runs, delivered code only fails at scoring, our side can fail any time it works
  (a planned run whose fleet node was lost before the run started fails as `infra` from `planned`).
- `counted` becomes false for `failed` with class `infra` (the attempt is retried as a new row) and for
  `cancelled` (the run was stopped by us, not by its outcome; it tells nothing about the agent).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from orchestrator.failures import IllegalTransition


class RunState(StrEnum):
    PLANNED = "planned"
    STARTING = "starting"
    RUNNING = "running"
    DELIVERED = "delivered"
    SCORED = "scored"
    AUDITED = "audited"
    FAILED = "failed"
    CANCELLED = "cancelled"


class FailureClass(StrEnum):
    #: our side: engine, daemon, host or fleet fault; the attempt is kept with counted = false and retried
    INFRA = "infra"
    #: the agent crashed or broke a limit; the attempt counts against it
    AGENT = "agent"
    #: the delivered code fails at scoring; counts as a failed attempt, never silently dropped
    UNSCORABLE = "unscorable"

    @property
    def retryable(self) -> bool:
        """Whether a study starts a new attempt after an attempt failed this way (our fault only)."""
        return self is FailureClass.INFRA


S = RunState

#: every allowed move; a state missing a target here cannot reach it
NEXT: dict[RunState, frozenset[RunState]] = {
    S.PLANNED: frozenset({S.STARTING, S.FAILED, S.CANCELLED}),
    S.STARTING: frozenset({S.RUNNING, S.FAILED, S.CANCELLED}),
    S.RUNNING: frozenset({S.DELIVERED, S.FAILED, S.CANCELLED}),
    S.DELIVERED: frozenset({S.SCORED, S.FAILED}),
    S.SCORED: frozenset({S.AUDITED}),
    S.AUDITED: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELLED: frozenset(),
}

#: the states from which a run may fail with each class
FAILURE_FROM: dict[FailureClass, frozenset[RunState]] = {
    FailureClass.INFRA: frozenset({S.PLANNED, S.STARTING, S.RUNNING, S.DELIVERED}),
    FailureClass.AGENT: frozenset({S.RUNNING}),
    FailureClass.UNSCORABLE: frozenset({S.DELIVERED}),
}

TERMINAL: frozenset[RunState] = frozenset(s for s, targets in NEXT.items() if not targets)

#: entering one of these ends the sandbox phase (the run's `ended_at`)
ENDS_SANDBOX: frozenset[RunState] = frozenset({S.DELIVERED, S.FAILED, S.CANCELLED})


@dataclass(frozen=True)
class Transition:
    """One checked move and what it changes on the run."""

    from_state: RunState
    to_state: RunState
    failure_class: FailureClass | None
    reason: str | None
    #: the run's new `counted`, or None to leave it as it is
    counted: bool | None


def transition(
    current: RunState | str,
    to: RunState | str,
    *,
    failure_class: FailureClass | str | None = None,
    reason: str | None = None,
) -> Transition:
    """Check the move `current -> to` and return what it changes; raise IllegalTransition if not allowed.

    Moving to `failed` needs a failure class allowed from `current` and a non-empty reason. A failure class
    on any other move is an error. A reason on other moves is kept in the transition event only."""
    current, to = RunState(current), RunState(to)
    if to not in NEXT[current]:
        why = (
            "the run is finished"
            if current in TERMINAL
            else f"{current} can only move to " + (", ".join(sorted(NEXT[current])))
        )
        raise IllegalTransition(current, to, why)
    cls = FailureClass(failure_class) if failure_class is not None else None
    if to is S.FAILED:
        if cls is None or not (reason and reason.strip()):
            raise IllegalTransition(current, to, "a failure class and a reason are required")
        if current not in FAILURE_FROM[cls]:
            allowed = ", ".join(sorted(FAILURE_FROM[cls]))
            raise IllegalTransition(current, to, f"a run fails as {cls} only from {allowed}")
        return Transition(current, to, cls, reason, counted=False if cls is FailureClass.INFRA else None)
    if cls is not None:
        raise IllegalTransition(current, to, f"a failure class ({cls}) is only for a move to failed")
    return Transition(current, to, None, reason, counted=False if to is S.CANCELLED else None)
