"""Evaluation rows recognised by content in a delivered workspace (compliance/content.py)."""

from __future__ import annotations

import bz2
import gzip
import pickle
import shutil
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.compliance.content import EvalRows, find_eval_copies

TARGET = "dep_delayed_15min"


@pytest.fixture(scope="module")
def data(small_flight_data: Path) -> Path:
    return small_flight_data


@pytest.fixture
def workspace(tmp_path: Path, data: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "data").mkdir(parents=True)
    shutil.copyfile(data / "train.csv", ws / "data" / "train.csv")
    shutil.copyfile(data / "eval.csv", ws / "data" / "eval.csv")
    (ws / "train.py").write_text("print(1)\n")
    return ws


def _scan(ws: Path, data: Path):
    scan = find_eval_copies(ws, EvalRows.read(data / "eval.csv", data / "train.csv", TARGET))
    return {c.path: (c.rows, c.labels, c.how) for c in scan.copies}, scan


def test_the_pristine_files_are_not_copies(workspace: Path, data: Path) -> None:
    found, scan = _scan(workspace, data)
    assert found == {} and scan.unchecked == []
    ev = pd.read_csv(data / "eval.csv")
    (workspace / "renamed_train.csv").write_bytes((data / "train.csv").read_bytes())
    pd.read_csv(data / "train.csv").sample(500, random_state=1).to_csv(workspace / "sub_train.csv", index=False)
    assert _scan(workspace, data)[0] == {}
    assert len(ev) == 1000


def test_copies_subsets_appended_rows_and_other_spellings_are_found(workspace: Path, data: Path) -> None:
    ev, tr = pd.read_csv(data / "eval.csv"), pd.read_csv(data / "train.csv")
    shutil.copyfile(data / "eval.csv", workspace / "rows.csv")                                 # renamed copy
    pd.concat([tr, ev.head(300)]).to_csv(workspace / "data" / "train.csv", index=False)        # appended
    ev.drop(columns=[TARGET]).sample(50, random_state=2).to_csv(workspace / "s.tsv", sep="\t", index=False)
    ev[list(reversed(ev.columns))].to_csv(workspace / "reordered.txt", index=True)            # by name, indexed
    ev.astype({"DepTime": float, "Distance": float}).to_csv(workspace / "floats", index=False)  # 1200.0
    (workspace / "cache").mkdir()
    (workspace / "cache" / "x.csv.gz").write_bytes(gzip.compress((data / "eval.csv").read_bytes()))
    (workspace / "b.bz2").write_bytes(bz2.compress((data / "eval.csv").read_bytes()))
    lines = (data / "eval.csv").read_text().splitlines()[1:31]
    (workspace / "helpers.py").write_text('ROWS = """\n' + "\n".join(lines) + '\n"""\n')   # inside code
    found, _ = _scan(workspace, data)
    assert found == {
        "rows.csv": (1000, True, "text"), "data/train.csv": (300, True, "text"), "s.tsv": (50, False, "text"),
        "reordered.txt": (1000, True, "text"), "floats": (1000, True, "text"),
        "cache/x.csv.gz": (1000, True, "gzip text"), "b.bz2": (1000, True, "bz2 text"),
        "helpers.py": (30, True, "text"),
    }


def test_parquet_is_read_with_pyarrow_and_pickles_are_listed_not_run(workspace: Path, data: Path) -> None:
    pytest.importorskip("pyarrow")
    ev = pd.read_csv(data / "eval.csv")
    ev.head(200).to_parquet(workspace / "e.parquet")
    ev.to_feather(workspace / "e.feather")
    (workspace / "e.pkl").write_bytes(pickle.dumps(ev))
    found, scan = _scan(workspace, data)
    assert found == {"e.parquet": (200, True, "parquet"), "e.feather": (1000, True, "arrow")}
    assert scan.unchecked == [("e.pkl", "a pickle")]
    assert any("not checked for evaluation rows: e.pkl (a pickle)" in n for n in scan.notes())


def test_a_few_rows_are_not_a_copy_and_links_are_never_followed(workspace: Path, data: Path, tmp_path: Path) -> None:
    lines = (data / "eval.csv").read_text().splitlines()
    (workspace / "few.csv").write_text("\n".join(lines[:4]) + "\n")        # header and 3 rows
    outside = tmp_path / "outside.csv"
    shutil.copyfile(data / "eval.csv", outside)
    (workspace / "link.csv").symlink_to(outside)
    assert _scan(workspace, data)[0] == {}
