"""What the ledger stores of agent-controlled strings: valid UTF-8, no NUL, bounded; refusals counted in bulk."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from orchestrator.failures import InvalidLedgerWrite
from orchestrator.ledger import Ledger, RunState
from orchestrator.ledger.fields import DETAIL_BYTES, JSON_DEPTH, TEXT_LIMIT, clean_json, clean_text
from tests.ledger.ledger_helpers import drive, plan

HOSTILE = "ok\ud800 \udfff\x00end\x1b[2J"


def _nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth):
        value = {"d": value}
    return value


def test_clean_text_makes_any_value_storable_and_bounded() -> None:
    text = clean_text(HOSTILE)
    text.encode("utf-8")  # no lone surrogate left
    assert "\x00" not in text and text.startswith("ok\ufffd \ufffd\ufffdend")
    assert clean_text(b"\xff\xfeab") == "\ufffd\ufffdab"
    long = clean_text("x" * (TEXT_LIMIT + 10))
    assert long.startswith("x" * TEXT_LIMIT) and long.endswith("...[10 more characters]")
    assert clean_text("x" * 10_000, limit=None) == "x" * 10_000


def test_clean_json_bounds_depth_and_keeps_numbers_finite() -> None:
    cleaned = clean_json({"a\ud800": [float("nan"), float("inf"), 1.5, True, None, b"\xff"], "deep": _nested(50)})
    assert cleaned["a\ufffd"] == ["nan", "inf", 1.5, True, None, "\ufffd"]
    depth, node = 0, cleaned["deep"]
    while isinstance(node, dict):
        node, depth = node.get("d", node.get("leaf")), depth + 1
    assert node == "[nested too deep]" and depth == JSON_DEPTH - 1
    json.dumps(cleaned, allow_nan=False)


def test_a_note_sqlite_could_not_encode_still_records_its_experiment(ledger: Ledger) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, RunState.RUNNING)
    for _ in range(4):
        ledger.add_experiment(run_id, status="ok", note=HOSTILE * 10_000)
    rows = ledger.experiments(run_id)
    assert len(rows) == 4 and ledger.get_run(run_id).experiments_counted == 4
    for row in rows:
        assert row.note is not None and len(row.note) < TEXT_LIMIT + 40 and "\x00" not in row.note
        row.note.encode("utf-8")


def test_event_details_and_reasons_are_cleaned_and_bounded(ledger: Ledger, tmp_path) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, RunState.RUNNING)
    ledger.add_event(run_id, "x", {"note": HOSTILE, "k\x00": float("nan"), "deep": _nested(1000)})
    ledger.add_event(run_id, "big", {f"k{i}": "v" * 1000 for i in range(500)})  # 500 kB of detail
    ledger.advance(run_id, RunState.FAILED, failure_class="agent", reason="crash: " + HOSTILE * 1000)
    events = {e.kind: e.detail for e in ledger.events(run_id)}
    assert events["x"]["note"].startswith("ok\ufffd") and events["x"]["k\ufffd"] == "nan"
    assert events["big"]["truncated"] is True and events["big"]["bytes"] > DETAIL_BYTES
    reason = ledger.get_run(run_id).failure_reason
    assert reason is not None and len(reason) < TEXT_LIMIT + 40 and "\x00" not in reason
    with sqlite3.connect(ledger.path) as conn:  # what another reader of the file sees
        for (text,) in conn.execute("SELECT detail_json FROM events WHERE run_id = ?", (run_id,)):
            assert len(text) <= DETAIL_BYTES
            json.loads(text)


def test_refusals_past_the_singly_recorded_are_counted_with_one_event(ledger: Ledger) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, RunState.RUNNING)
    ledger.add_experiment(run_id, status="refused")
    size = os.path.getsize(ledger.path)
    ledger.add_refusals(run_id, 58_638, {"reasons": {"all 4 experiments are spent": 58_638}})
    ledger.add_refusals(run_id, 0)
    assert ledger.get_run(run_id).experiments_refused == 58_639
    assert len(ledger.experiments(run_id)) == 1
    bulk = [e.detail for e in ledger.events(run_id, "experiments_refused_in_bulk")]
    assert bulk == [{"count": 58_638, "reasons": {"all 4 experiments are spent": 58_638}}]
    assert os.path.getsize(ledger.path) - size < 64 << 10
    with pytest.raises(InvalidLedgerWrite):
        ledger.add_refusals(run_id, -1)
