"""Auditing the runs of a study from the ledger's runs table."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from compliance.store import load_records
from compliance.study import audit_study
from orchestrator.failures import LedgerUnavailable


def test_no_runs_table_is_a_clear_error(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "l.sqlite")
    try:
        with pytest.raises(LedgerUnavailable, match="runs ledger"):
            audit_study(conn, "s1")
    finally:
        conn.close()


def test_runs_table_without_the_columns_it_needs(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "l.sqlite")
    try:
        conn.execute("CREATE TABLE runs (id TEXT)")
        with pytest.raises(LedgerUnavailable, match="run_id"):
            audit_study(conn, "s1")
    finally:
        conn.close()


def test_audits_and_stores_every_run(tmp_path: Path) -> None:
    good = tmp_path / "r1"
    good.mkdir()
    (good / "train.py").write_text("import pandas as pd\nmodel.fit(pd.read_csv('data/eval.csv'), y)\n")
    conn = sqlite3.connect(tmp_path / "l.sqlite")
    try:
        conn.execute("CREATE TABLE runs (run_id TEXT, study_id TEXT, artifact_path TEXT)")
        conn.executemany(
            "INSERT INTO runs VALUES (?, ?, ?)",
            [("r1", "s1", str(good)), ("r2", "s1", None), ("r3", "other", str(good))],
        )
        audited = audit_study(conn, "s1")
        assert sorted(audited) == ["r1", "r2"]
        assert {r.rule: r.verdict for r in load_records(conn, "r1")}["eval_labels_in_fit"] == "flagged"
        assert {r.verdict for r in load_records(conn, "r2")} == {"error"}  # no artifact: never clear
    finally:
        conn.close()
