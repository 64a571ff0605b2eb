"""`find_run` by prefix reads ranges of indexes (SQLite's own query plan says so), with the same answers."""

from __future__ import annotations

import sqlite3

import pytest

from orchestrator.failures import AmbiguousRunId, RunNotFound
from orchestrator.ledger import Ledger
from orchestrator.ledger.fields import HEX_AT, HEX_TAIL, prefix_range
from orchestrator.ledger.records import RUN_SELECT
from orchestrator.ledger.schema import _RUNS_BY_HEX_TAIL
from tests.ledger.ledger_helpers import plan


def test_prefix_range_bounds_exactly_the_extensions() -> None:
    assert prefix_range("r-2026") == ("r-2026", "r-2027")
    assert prefix_range("abc") == ("abc", "abd")
    assert prefix_range("a" + chr(0x10FFFF)) == ("a" + chr(0x10FFFF), "b")
    assert prefix_range(chr(0x10FFFF)) == (chr(0x10FFFF), None)
    words = ["ab", "abc", "ab\x7f", "ab\u00e9", "abd", "aa", "b", "a"]
    low, high = prefix_range("ab")
    assert high is not None
    assert sorted(w for w in words if low <= w < high) == sorted(w for w in words if w.startswith("ab"))


def test_the_index_spells_the_expression_the_lookup_uses() -> None:
    assert HEX_AT == 18 and HEX_TAIL in _RUNS_BY_HEX_TAIL


def _plan_of(ledger: Ledger, column: str) -> str:
    conn = sqlite3.connect(ledger.path)
    try:
        rows = conn.execute(
            f"EXPLAIN QUERY PLAN {RUN_SELECT} WHERE {column} >= ? AND {column} < ? ORDER BY runs.run_id LIMIT 11",
            ("r-2026", "r-2027"),
        ).fetchall()
    finally:
        conn.close()
    return "\n".join(str(r[-1]) for r in rows)


@pytest.mark.parametrize(("column", "index"), [("run_id", "sqlite_autoindex_runs_1"), (HEX_TAIL, "runs_by_hex_tail")])
def test_prefix_lookups_search_an_index_not_every_run(ledger: Ledger, column: str, index: str) -> None:
    for _ in range(30):
        plan(ledger)
    conn = sqlite3.connect(ledger.path)
    conn.execute("ANALYZE")  # the plan the planner picks once it knows the table is not tiny
    conn.close()
    plan_text = _plan_of(ledger, column)
    runs_line = next(line for line in plan_text.splitlines() if "runs" in line and "studies" not in line)
    assert runs_line.startswith("SEARCH runs USING") and index in runs_line, plan_text
    assert "SCAN runs" not in plan_text, plan_text


def test_lookups_by_prefix_tail_and_without_r_find_the_one_run(ledger: Ledger) -> None:
    ids = [plan(ledger) for _ in range(12)]
    for run_id in ids:
        tail = run_id[HEX_AT - 1 :]
        assert ledger.find_run(run_id).run_id == run_id
        assert ledger.find_run(run_id[2:]).run_id == run_id
        others = [i for i in ids if i != run_id]
        if not any(i[HEX_AT - 1 :].startswith(tail[:4]) or i[2:].startswith(tail[:4]) for i in others):
            assert ledger.find_run(tail[:4]).run_id == run_id


def test_ambiguous_and_missing_prefixes_keep_their_errors(ledger: Ledger) -> None:
    ids = sorted(plan(ledger) for _ in range(12))
    with pytest.raises(AmbiguousRunId, match="matches more than 10 runs") as exc:
        ledger.find_run("r-")
    assert ", ".join(ids[:10]) in str(exc.value)
    with pytest.raises(RunNotFound, match="no run 'zzz'"):
        ledger.find_run("zzz")
    with pytest.raises(RunNotFound, match="^no run "):  # the open-ended range: no upper bound
        ledger.find_run("\U0010ffff")
