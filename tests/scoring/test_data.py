from pathlib import Path

import pytest

from orchestrator.failures import DataError
from orchestrator.scoring.batches import Layout
from orchestrator.scoring.data import labelled_rows, load_hidden, row_space


def test_hidden_set_keeps_raw_lines_and_labels(flight_data: Path) -> None:
    hidden = load_hidden(flight_data, "holdout")
    raw = (flight_data / "holdout.features.csv").read_bytes().splitlines(keepends=True)
    assert hidden.n == 3000 == len(raw) - 1 == len(hidden.labels)
    assert hidden.batch_csv([0, 2]) == raw[0] + raw[1] + raw[3]
    assert int(hidden.labels.sum()) == 1500
    assert load_hidden(flight_data, "later").n == 3000


def test_hidden_set_problems_are_data_errors(tmp_path: Path, flight_data: Path) -> None:
    with pytest.raises(DataError, match="unknown dataset"):
        load_hidden(flight_data, "eval")
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("train.csv", "eval.csv", "holdout.labels.csv"):
        (bad / name).write_bytes((flight_data / name).read_bytes())
    (bad / "holdout.features.csv").write_text("Month,Dest\nc-1,BOS\n")
    with pytest.raises(DataError, match="differ from train.csv"):
        load_hidden(bad, "holdout")
    with pytest.raises(DataError, match="missing"):
        load_hidden(bad, "later")


def test_labelled_rows_drop_the_label_and_keep_it_on_the_host(flight_data: Path) -> None:
    rows = labelled_rows(flight_data / "eval.csv", target="dep_delayed_15min")
    raw = (flight_data / "eval.csv").read_text().splitlines()
    assert len(rows.lines) == len(raw) - 1 == len(rows.labels)
    assert rows.lines[0].decode() == raw[1].rsplit(",", 1)[0] + "\n"
    assert b"dep_delayed_15min" not in rows.header
    assert int(rows.labels.sum()) == sum(line.endswith(",Y") for line in raw[1:])
    assert all(b",Y\n" not in line and b",N\n" not in line for line in rows.lines[:50])


def test_the_row_space_numbers_scored_then_eval_then_train_rows(flight_data: Path) -> None:
    hidden = load_hidden(flight_data, "holdout")
    ev = labelled_rows(flight_data / "eval.csv", target="dep_delayed_15min")
    tr = labelled_rows(flight_data / "train.csv", target="dep_delayed_15min")
    space = row_space(hidden, ev, tr)
    assert space.layout == Layout(3000, 2000, 4000)
    assert space.batch_csv([0, 3000, 5000]) == hidden.header + hidden.lines[0] + ev.lines[0] + tr.lines[0]
    assert space.layout.eval_ids[0] == 3000 and space.layout.train_ids[-1] == 8999


def test_a_labelled_file_with_other_columns_is_a_data_error(tmp_path: Path, flight_data: Path) -> None:
    bad = tmp_path / "eval.csv"
    bad.write_text("Month,Dest,dep_delayed_15min\nc-1,BOS,Y\n")
    with pytest.raises(DataError, match="differ"):
        row_space(load_hidden(flight_data, "holdout"), labelled_rows(bad, target="dep_delayed_15min"), None)
    bad.write_text("Month,Dest,dep_delayed_15min\nc-1,BOS,maybe\n")
    with pytest.raises(DataError, match="neither"):
        labelled_rows(bad, target="dep_delayed_15min")
