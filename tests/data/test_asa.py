import bz2
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.data import DepTime, SliceSizes, draw_slices, make_options, open_source, prepare
from orchestrator.data.asa import DEFAULT_SIZES, AsaExpo, read_year
from orchestrator.data.columns import LABEL, ROW_ID
from orchestrator.data.slicing import SliceName
from orchestrator.failures import DataError

from .conftest import WriteYear, asa_year_frame

SMALL = SliceSizes(train=100, eval=60, holdout=100, later=120)


def slices(directory: Path, dep_time: DepTime = DepTime.SCHEDULED, sizes: SliceSizes = SMALL) -> dict:
    source = AsaExpo(directory)
    return dict(draw_slices(source, make_options(source, dep_time=dep_time, seed=42, sizes=sizes)))


def test_reference_sizes_are_the_default() -> None:
    assert DEFAULT_SIZES == SliceSizes(train=100_000, eval=100_000, holdout=1_000_000, later=1_000_000)


def test_slices_come_from_their_year_with_exact_size_and_balance(asa_dir: Path) -> None:
    out = slices(asa_dir)
    years: dict[SliceName, str] = {"train": "Y5", "eval": "Y6", "holdout": "Y6", "later": "Y7"}
    for name, carrier in years.items():
        frame = out[name]
        assert len(frame) == SMALL.of(name)
        assert (frame[LABEL] == "Y").sum() == SMALL.of(name) // 2
        assert set(frame["UniqueCarrier"]) == {carrier}
    assert not set(out["eval"][ROW_ID]) & set(out["holdout"][ROW_ID])


def test_plain_and_bz2_files_give_the_same_slices(tmp_path: Path, write_year: WriteYear) -> None:
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    for directory, compress in ((plain, False), (packed, True)):
        directory.mkdir()
        for year in (2005, 2006, 2007):
            write_year(directory, year, compress=compress)
    a, b = slices(plain), slices(packed)
    assert all(a[name].equals(b[name]) for name in a)


def test_plain_file_wins_over_bz2_of_the_same_year(asa_dir: Path, write_year: WriteYear) -> None:
    write_year(asa_dir, 2006)  # now both 2006.csv and 2006.csv.bz2
    assert [f.name for f in AsaExpo(asa_dir).inputs()] == ["2005.csv", "2006.csv", "2007.csv"]


def test_dep_time_scheduled_vs_actual(asa_dir: Path) -> None:
    raw = pd.read_csv(asa_dir / "2005.csv")
    sched = slices(asa_dir)["train"]
    actual = slices(asa_dir, DepTime.ACTUAL)["train"]
    assert sched[ROW_ID].tolist() == actual[ROW_ID].tolist()
    assert sched["DepTime"].tolist() == raw.loc[sched[ROW_ID], "CRSDepTime"].tolist()
    assert actual["DepTime"].tolist() == raw.loc[actual[ROW_ID], "DepTime"].astype("int64").tolist()
    assert sched["DepTime"].tolist() != actual["DepTime"].tolist()


def test_label_rule_on_asa_rows(tmp_path: Path) -> None:
    frame = asa_year_frame(2005, 6)
    frame["DepDelay"] = [14, 15, -3, 16, 0, 200]
    path = tmp_path / "2005.csv"
    frame.to_csv(path, index=False, na_rep="NA")
    assert read_year(path, 2005, DepTime.SCHEDULED)[LABEL].tolist() == ["N", "Y", "N", "Y", "N", "Y"]


def test_cancelled_rows_are_dropped(asa_dir: Path) -> None:
    raw = pd.read_csv(asa_dir / "2005.csv")
    frame = read_year(asa_dir / "2005.csv", 2005, DepTime.SCHEDULED)
    assert len(frame) == int((raw["Cancelled"] == 0).sum()) < len(raw)


# --- bad input: every failure names the file and the problem ------------------------------------------


def prepare_asa(directory: Path, out: Path, sizes: SliceSizes = SMALL) -> None:
    prepare(open_source("asa", directory), out, sizes=sizes)


def test_missing_columns_are_named(asa_dir: Path, write_year: WriteYear, tmp_path: Path) -> None:
    write_year(asa_dir, 2005, frame=asa_year_frame(2005, 50).drop(columns=["DepDelay", "Origin"]))
    with pytest.raises(DataError, match=r"2005\.csv: missing columns DepDelay, Origin$"):
        prepare_asa(asa_dir, tmp_path / "out")


def test_empty_file(asa_dir: Path, tmp_path: Path) -> None:
    (asa_dir / "2005.csv").write_text("")
    with pytest.raises(DataError, match=r"2005\.csv: empty file"):
        prepare_asa(asa_dir, tmp_path / "out")


def test_header_only_file(asa_dir: Path, tmp_path: Path, write_year: WriteYear) -> None:
    write_year(asa_dir, 2005, frame=asa_year_frame(2005, 0))
    with pytest.raises(DataError, match=r"2005\.csv: no data rows"):
        prepare_asa(asa_dir, tmp_path / "out")


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_bz2(asa_dir: Path, tmp_path: Path, damage: str) -> None:
    path = asa_dir / "2006.csv.bz2"
    data = (
        b"this is not bz2 at all\n" if damage == "garbage" else path.read_bytes()[: path.stat().st_size // 2]
    )
    path.write_bytes(data)
    with pytest.raises(DataError, match=r"2006\.csv\.bz2: unreadable or corrupt bz2 compression"):
        prepare_asa(asa_dir, tmp_path / "out")
    assert list(tmp_path.iterdir()) == [asa_dir]  # nothing half-written next to OUT


def test_missing_year_file_fails_before_reading(asa_dir: Path, tmp_path: Path) -> None:
    (asa_dir / "2007.csv").unlink()
    with pytest.raises(DataError) as exc:
        prepare_asa(asa_dir, tmp_path / "out")
    assert "missing year file" in str(exc.value)
    assert str(asa_dir / "2007.csv") in str(exc.value) and "2007.csv.bz2" in str(exc.value)


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a directory"):
        prepare_asa(tmp_path / "nowhere", tmp_path / "out")


def test_asa_needs_dir() -> None:
    with pytest.raises(DataError, match="needs --dir"):
        open_source("asa")


def test_too_few_rows_for_a_slice(asa_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError) as exc:
        prepare_asa(asa_dir, tmp_path / "out", SMALL.model_copy(update={"holdout": 400}))
    message = str(exc.value)
    assert "slice 'holdout' needs 400 rows (200 Y + 200 N) from period 2006" in message
    assert "2006.csv.bz2" in message and "already went to 'eval'" in message
    assert list(tmp_path.iterdir()) == [asa_dir]


def test_file_for_the_wrong_year(asa_dir: Path, write_year: WriteYear, tmp_path: Path) -> None:
    write_year(asa_dir, 2005, frame=asa_year_frame(2004, 300))
    with pytest.raises(DataError, match=r"2005\.csv: holds flights of 2004, but the file is for 2005"):
        prepare_asa(asa_dir, tmp_path / "out")


def test_unparseable_numbers(asa_dir: Path, write_year: WriteYear, tmp_path: Path) -> None:
    frame = asa_year_frame(2005, 300)
    frame["Distance"] = frame["Distance"].astype("str")
    frame.loc[5, "Distance"] = "far"
    write_year(asa_dir, 2005, frame=frame)
    with pytest.raises(DataError, match=r"2005\.csv: malformed CSV"):
        prepare_asa(asa_dir, tmp_path / "out")


def test_binary_plain_file(asa_dir: Path, tmp_path: Path) -> None:
    (asa_dir / "2005.csv").write_bytes(bz2.compress(b"Year,Month\n2005,1\n"))
    with pytest.raises(DataError, match=r"2005\.csv: not a text CSV"):
        prepare_asa(asa_dir, tmp_path / "out")
