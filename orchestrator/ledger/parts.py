"""`LedgerPart`: one table's reads and writes, reached through the Ledger that owns the connection.

The Ledger keeps the connection, its lock, its transactions (`batch()`), studies, runs, events and
experiments; every other table is a part of it, an attribute named for what it holds:

    ledger.scores      ScoresPart      ledger/scores.py            scores of a run, by dataset
    ledger.audits      AuditsPart      ledger/audits.py            audit records and reviewers' overrides
    ledger.usage       UsagePart       ledger/model_usage.py       what the gateway measured of the model calls
    ledger.replays     ReplaysPart     ledger/replays.py           `sbx replay` of a run's calls
    ledger.judges      JudgesPart      ledger/judge_verdicts.py    judges' verdicts
    ledger.outcomes    OutcomesPart    ledger/outcomes.py          pass/fail outcomes of tests tasks
    ledger.divergence  DivergencePart  ledger/diverge.py           divergence definitions and analyses
    ledger.transfer    TransferPart    ledger/transfer.py          one run carried between ledgers

A part holds nothing of its own: each write is one of the Ledger's (`BEGIN IMMEDIATE`, or a savepoint of
the Ledger's `batch()`), under the Ledger's lock, with the run id checked in the same transaction; each
read is one snapshot of the Ledger's (joining its transaction when nested). `Ledger` declares each as
`scores = part(ScoresPart)`: the part object is made on each access (cheap), so it never keeps its Ledger
alive beyond the call (no reference cycle). A new table adds its SQL and its part in its own module and one
`part(...)` line on `Ledger`, not methods on `Ledger` (tests/test_architecture.py counts them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, overload

if TYPE_CHECKING:
    from orchestrator.ledger.ledger import Ledger


class LedgerPart:
    __slots__ = ("_ledger",)

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    # the Ledger's own plumbing (ledger.py), shared by every part of it

    def _read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._ledger._read()

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._ledger._write()

    def _run_row(self, conn: sqlite3.Connection, run_id: str) -> sqlite3.Row:
        """The run's row, or RunNotFound: a write about a run checks it in its own transaction."""
        return self._ledger._run_row(conn, run_id)

    def _insert_event(self, conn: sqlite3.Connection, run_id: str, kind: str, detail: Mapping[str, Any]) -> int:
        """Record an event of the run inside the caller's write (the Ledger's `add_event` without its checks)."""
        return self._ledger._insert_event(conn, run_id, kind, detail, None)


P = TypeVar("P", bound=LedgerPart)


class part(Generic[P]):  # lower case: a descriptor, used as `property` is
    """A part as an attribute of `Ledger`: `scores = part(ScoresPart)` makes `ledger.scores` a new
    ScoresPart of that ledger on each access."""

    __slots__ = ("kind",)

    def __init__(self, kind: type[P]) -> None:
        self.kind = kind

    @overload
    def __get__(self, ledger: None, owner: type[Ledger]) -> Self: ...
    @overload
    def __get__(self, ledger: Ledger, owner: type[Ledger]) -> P: ...
    def __get__(self, ledger: Ledger | None, owner: type[Ledger]) -> P | Self:
        return self if ledger is None else self.kind(ledger)
