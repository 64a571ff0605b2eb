"""Model usage in the ledger (ledger/model_usage.py): one row per run, replaced as the gateway closes the run,
carried to and from fleet nodes, final once the run is audited, and read by the one run record."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from orchestrator.failures import InvalidLedgerWrite, RunNotFound
from orchestrator.ledger import Ledger, ModelUsage, RunState
from orchestrator.run.record import full_record, run_row
from tests.ledger.ledger_helpers import drive, plan

S = RunState

REPORT = {"input_tokens": 1200, "cached_input_tokens": 800, "cache_write_tokens": 0, "output_tokens": 90,
          "reasoning_tokens": 30, "cost_usd": 0.0123, "calls": 3, "source": "stdout:result", "complete": True,
          "skipped": 0, "read_from": "stdout copy", "files": []}


def _usage(**changes: object) -> ModelUsage:
    values: dict[str, object] = {
        "endpoint": "anthropic", "api": "anthropic", "model": "claude-sonnet-4-5", "agent_version": "2.1.332",
        "rate_card_date": "2026-11-01", "calls": 4, "ok": 3, "refused": 1, "input_tokens": 1200,
        "cached_input_tokens": 800, "cache_write_tokens": 100, "output_tokens": 90, "reasoning_tokens": 30,
        "cost_usd": 0.0021945, "last_outcome": "ok", "transcript_sha256": "ab" * 32, "self_report": REPORT,
        "closed": True}
    return ModelUsage(**{**values, **changes})  # type: ignore[arg-type]


def test_saved_and_replaced_per_run(ledger: Ledger) -> None:
    run_id = plan(ledger)
    assert ledger.usage.of_run(run_id) is None
    opened = ModelUsage(endpoint="anthropic", api="anthropic", model="claude-sonnet-4-5", agent_version="2.1.332")
    ledger.usage.save(run_id, opened)
    assert ledger.usage.of_run(run_id) == opened  # zeros, not closed, cost unknown
    ledger.usage.save(run_id, _usage())
    assert ledger.usage.of_run(run_id) == _usage()
    with sqlite3.connect(ledger.path) as conn:
        assert conn.execute("SELECT count(*) FROM model_usage").fetchone()[0] == 1


def test_the_table_refuses_what_cannot_be(ledger: Ledger) -> None:
    run_id = plan(ledger)
    with pytest.raises(sqlite3.IntegrityError):
        ledger.usage.save(run_id, _usage(api="gemini"))
    with pytest.raises(sqlite3.IntegrityError):
        ledger.usage.save(run_id, _usage(output_tokens=-1))
    with pytest.raises(InvalidLedgerWrite):
        ledger.usage.save(run_id, _usage(cost_usd=float("nan")))
    with pytest.raises(RunNotFound):  # a row names a run the ledger holds
        ledger.usage.save("r-nope", _usage())


def test_an_audited_run_is_final(ledger: Ledger) -> None:
    run_id = plan(ledger)
    drive(ledger, run_id, S.AUDITED)
    with pytest.raises(InvalidLedgerWrite, match="audited"):
        ledger.usage.save(run_id, _usage())


def test_carried_to_and_from_a_node(ledger: Ledger, tmp_path: Path) -> None:
    run_id = plan(ledger, study_id=ledger.create_study("fleet"), repeat=1)
    sent = ledger.transfer.export_run(run_id)
    with Ledger(tmp_path / "node.sqlite") as node:
        node.transfer.import_run(sent)
        drive(node, run_id, S.DELIVERED)
        node.usage.save(run_id, _usage())
        back = node.transfer.export_run(run_id)
    assert len(back["tables"]["model_usage"]) == 1
    ledger.transfer.import_run(back, base=S.PLANNED)
    assert ledger.usage.of_run(run_id) == _usage()


def test_the_run_record_reads_the_gateways_numbers_and_the_clis_beside_them(ledger: Ledger) -> None:
    run_id = plan(ledger, model="claude-sonnet-4-5")
    row = run_row(ledger, run_id)
    assert all(row[k] is None for k in ("cost_usd", "input_tokens", "model_calls", "reported_input_tokens", "endpoint"))
    ledger.usage.save(run_id, _usage())
    row = run_row(ledger, run_id)
    assert (row["cost_usd"], row["input_tokens"], row["cached_input_tokens"], row["output_tokens"],
            row["reasoning_tokens"], row["model_calls"]) == (0.0021945, 1200, 800, 90, 30, 4)
    assert (row["reported_input_tokens"], row["reported_output_tokens"], row["reported_cost_usd"],
            row["reported_calls"]) == (1200, 90, 0.0123, 3)
    assert (row["endpoint"], row["agent_version"], row["model_calls_refused"]) == ("anthropic", "2.1.332", 1)
    assert full_record(ledger, run_id)["model_usage"] == _usage().to_json()
    # an incomplete self-report is not a number to compare with
    ledger.usage.save(run_id, _usage(self_report={**REPORT, "complete": False}))
    assert run_row(ledger, run_id)["reported_input_tokens"] is None
    # a call without a price makes the run's cost unknown, never a partial sum
    ledger.usage.save(run_id, _usage(unpriced=1, cost_usd=None))
    assert run_row(ledger, run_id)["cost_usd"] is None


def test_what_the_cli_printed_is_stored_clean_and_bounded(ledger: Ledger) -> None:
    """The self-report is what an agent program printed: valid UTF-8, no NUL, bounded like an event's detail."""
    run_id = plan(ledger)
    hostile = {"source": "stdout\x00\ud800", "files": ["x" * 100_000] * 40, "cost_usd": float("nan")}
    ledger.usage.save(run_id, _usage(self_report=hostile, agent_version="1.0\x00" + "v" * 5000))
    stored = ledger.usage.of_run(run_id)
    assert stored is not None
    assert stored.agent_version is not None and "\x00" not in stored.agent_version and len(stored.agent_version) < 300
    assert stored.self_report["truncated"] is True and stored.self_report["bytes"] > 64 << 10
    with sqlite3.connect(ledger.path) as conn:
        (text,) = conn.execute("SELECT self_report_json FROM model_usage WHERE run_id = ?", (run_id,)).fetchone()
    assert len(text) < 64 << 10 and "\\u0000" not in text
    ledger.usage.save(run_id, _usage(self_report={"source": "a\x00b\udfff", "cost_usd": float("inf")}))
    stored = ledger.usage.of_run(run_id)
    assert stored is not None and stored.self_report == {"source": "a\ufffdb\ufffd", "cost_usd": "inf"}
