"""Agent strings and floods against the ledger and the terminal (issue 11, class 6), in a real run."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from orchestrator.cli.show import format_record
from orchestrator.ledger import Ledger
from orchestrator.run.record import full_record
from orchestrator.sandbox.experiments import REFUSALS_RECORDED

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_hostile_notes_keep_their_experiments_and_a_refusal_flood_stays_small(run_agent, sbx_home: Path,
                                                                              ledger: Ledger) -> None:
    record = run_agent("strings.sh", experiments=2, cpu_seconds=60, hard_stop_cpu_seconds=120, experiment_timeout_s=40)
    assert record["status"] == "delivered", record["failure_reason"]
    delivered = sbx_home / "runs" / record["run_id"] / "delivered" / "workspace"
    assert json.loads((delivered / "notes.json").read_text()) == ["ok", "ok"]
    flood = json.loads((delivered / "flood.json").read_text())
    assert flood["refused"] == flood["sent"] == 20_000
    # both experiments that ran are on record, with their notes made storable
    counted = [x for x in record["experiments"] if x["counted"]]
    assert [x["n"] for x in counted] == [1, 2] and record["experiments_counted"] == 2
    assert all(x["note"].startswith("n\ufffdx\ufffd\ufffd\x1b[2J") for x in counted)
    # every refusal is counted; only the first ones are rows
    assert record["experiments_refused"] == 20_000
    rows = [x for x in record["experiments"] if not x["counted"]]
    assert len(rows) == REFUSALS_RECORDED
    bulk = [e["detail"] for e in record["events"] if e["kind"] == "experiments_refused_in_bulk"]
    assert [b["count"] for b in bulk] == [20_000 - REFUSALS_RECORDED]
    assert sum(e["kind"] == "experiment_refused" for e in record["events"]) == REFUSALS_RECORDED
    with sqlite3.connect(ledger.path) as conn:  # the write-ahead log folded in: the file is what stays
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(ledger.path)
    assert size < 512 << 10, f"the ledger grew to {size} bytes"
    # and what `sbx show` prints of it cannot rewrite the terminal
    text = format_record(full_record(ledger, record["run_id"]))
    assert "\x1b" not in text and "\r" not in text
    assert not any(line.startswith(("holdout", "compliance")) for line in text.splitlines())
