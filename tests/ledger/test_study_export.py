"""`sbx export` writes its CSV from the record's columns with the csv module (issue 23); these tests hold it
byte for byte to what the export wrote before: pandas' `to_csv` of the frame of the per-run rows
(tests/ledger/per_run_record.py, the old read kept as the oracle), on studies with every kind of row, and
on columns of the values whose cells pandas writes in its own way (ints beside None become floats, a bool
beside None stays a bool, NaN is an empty cell, times to the nanosecond). The report's frame and the
Parquet file are pandas' own and equal the old frame, dtypes included."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from orchestrator.ledger import Ledger
from orchestrator.run.record import TIME_COLUMNS, Columns, rows_of, study_table
from orchestrator.study.export import export, runs_frame, write_csv
from tests.ledger.per_run_record import old_run_row
from tests.ledger.test_study_reads import _ml_study, _tests_study


def _old_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The export's frame as it was built before: pandas' inference over a list of row dicts."""
    frame = pd.DataFrame(rows)
    for column in TIME_COLUMNS:
        if column in frame:
            frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
    return frame


def _old_csv(rows: list[dict[str, Any]], out: Path) -> bytes:
    """The old export's CSV, verbatim: the frame's times as ISO 8601, then `to_csv`."""
    frame = _old_frame(rows)
    for column in TIME_COLUMNS:
        if column in frame:
            frame[column] = frame[column].map(lambda t: t.isoformat() if pd.notna(t) else None)
    frame.to_csv(out, index=False)
    return out.read_bytes()


@pytest.fixture
def studies(ledger: Ledger) -> list[str]:
    return [_ml_study(ledger, "ml", 24), _tests_study(ledger), _ml_study(ledger, "ml-2", 9)]


def test_the_csv_is_the_old_export_byte_for_byte(ledger: Ledger, studies: list[str], tmp_path: Path) -> None:
    for name, study in zip(("ml", "tests-study", "ml-2"), studies, strict=True):
        old = [old_run_row(ledger, r.run_id) for r in ledger.list_runs(study_id=study)]
        path, rows = export(ledger, name, "csv", tmp_path / f"{name}.csv")
        assert rows == len(old) > 0
        assert path.read_bytes() == _old_csv(old, tmp_path / "old.csv"), name


def test_the_report_frame_and_parquet_are_the_old_frame(ledger: Ledger, studies: list[str], tmp_path: Path) -> None:
    for study in studies:
        old = _old_frame([old_run_row(ledger, r.run_id) for r in ledger.list_runs(study_id=study)])
        pd.testing.assert_frame_equal(runs_frame(ledger, study), old)
    path, _ = export(ledger, "ml", "parquet", tmp_path / "ml.parquet")
    old = _old_frame([old_run_row(ledger, r.run_id) for r in ledger.list_runs(study_id=studies[0])])
    assert path.read_bytes() == old.to_parquet(index=False)  # the same frame makes the same file


def test_an_empty_study_writes_what_it_wrote(ledger: Ledger, tmp_path: Path) -> None:
    ledger.create_study("empty")
    path, rows = export(ledger, "empty", "csv", tmp_path / "e.csv")
    assert rows == 0 and path.read_bytes() == _old_csv([], tmp_path / "old.csv") == b"\n"


def _column(rng: random.Random, kind: str, n: int) -> list[Any]:
    floats = [0.0, -0.0, 1e16, 1e-5, 0.1 + 0.2, 1e22, 5e-324, 123456789.123456789, float("inf"), float("nan")]
    pick: dict[str, Any] = {
        "float": lambda: rng.choice([rng.uniform(-1, 1) * 10 ** rng.randint(-8, 20), rng.choice(floats)]),
        "int": lambda: rng.randint(-10**12, 10**12),
        "bool": lambda: rng.random() < 0.5,
        "str": lambda: rng.choice(["", "a,b", 'say "x"', "two\nlines", "tab\there", "é ü", "plain"]),
        "json": lambda: rng.choice([{"a": 1}, [1, 2], 3]),
        "time": lambda: 1.7e9 + rng.choice([0.0, 0.5, rng.random(), rng.randint(0, 10**6) / 1e6, 1e-9 * rng.randint(1, 999)]),
    }
    kinds = kind.split("+")
    return [None if "None" in kinds and rng.random() < 0.3 else pick[rng.choice([k for k in kinds if k != "None"])]()
            for _ in range(n)]


@pytest.mark.parametrize("kind", ["float", "float+None", "int", "int+None", "float+int", "float+int+None", "bool",
                                  "bool+None", "bool+int", "str", "str+None", "str+float", "json+None",
                                  "bool+float+None"])
def test_each_kind_of_column_is_written_as_pandas_writes_it(kind: str, tmp_path: Path) -> None:
    rng = random.Random(kind)
    for n in (1, 7, 200):
        columns: Columns = {"value": _column(rng, kind, n), "created_at": _column(rng, "time+None", n),
                            "ended_at": [None] * n, "started_at": _column(rng, "time", n)}
        write_csv(columns, tmp_path / "new.csv")
        assert (tmp_path / "new.csv").read_bytes() == _old_csv(rows_of(columns), tmp_path / "old.csv"), (kind, n)


def test_the_table_is_the_rows(ledger: Ledger, studies: list[str]) -> None:
    table = study_table(ledger, studies[0])
    assert rows_of(table) == [old_run_row(ledger, r.run_id) for r in ledger.list_runs(study_id=studies[0])]
