"""The reference study's source: per-year CSV files of the ASA Data Expo 2009 airline data, which users
bring themselves (`2005.csv`, `2006.csv`, `2007.csv`, each optionally bz2-compressed as distributed).

Slicing follows the study: train from 2005, eval and a disjoint holdout from 2006, later-period
re-scoring from 2007. These files are large (about 7 million rows a year), so each year is read once,
only the columns the task needs, and every way a file can be bad becomes a DataError naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pandas as pd

from orchestrator.data.columns import DepTime, task_frame
from orchestrator.data.manifest import InputFile, SourceName
from orchestrator.data.slicing import SliceSizes
from orchestrator.data.source import Period, fingerprint
from orchestrator.failures import DataError

#: earliest to latest: train / eval + holdout / later
YEARS: Final = (2005, 2006, 2007)
#: the reference study's sizes
DEFAULT_SIZES: Final = SliceSizes(train=100_000, eval=100_000, holdout=1_000_000, later=1_000_000)

_NUMERIC: Final = (
    "Year",
    "Month",
    "DayofMonth",
    "DayOfWeek",
    "DepTime",
    "CRSDepTime",
    "Distance",
    "DepDelay",
)
_TEXT: Final = ("UniqueCarrier", "Origin", "Dest")
#: columns read from each file (the others in the original layout are ignored)
REQUIRED: Final = (*_NUMERIC, *_TEXT)
_DTYPES: Final[dict[str, str]] = {**{c: "float64" for c in _NUMERIC}, **{c: "str" for c in _TEXT}}


def year_file(directory: Path, year: int) -> Path:
    """`DIR/<year>.csv`, else `DIR/<year>.csv.bz2`; a missing year is a DataError naming both."""
    for name in (f"{year}.csv", f"{year}.csv.bz2"):
        if (directory / name).is_file():
            return directory / name
    raise DataError(
        f"missing year file: neither {directory / f'{year}.csv'} nor {directory / f'{year}.csv.bz2'} exists"
    )


def _read(path: Path, **kwargs: object) -> pd.DataFrame:
    """read_csv with every decoding failure turned into a DataError that names the file."""
    try:
        return pd.read_csv(path, keep_default_na=False, na_values=["NA", ""], **kwargs)
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: empty file (no header line)") from None
    except (OSError, EOFError) as exc:
        if path.suffix == ".bz2":
            raise DataError(f"{path}: unreadable or corrupt bz2 compression ({exc})") from None
        raise DataError(f"{path}: cannot read ({exc})") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not a text CSV ({exc.reason} at byte {exc.start})") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise DataError(f"{path}: malformed CSV ({exc})") from None


def read_year(path: Path, year: int, dep_time: DepTime) -> pd.DataFrame:
    """One year file as a task frame; ROW_ID is the data row's position in the file."""
    header = _read(path, nrows=0)
    missing = [c for c in REQUIRED if c not in header.columns]
    if missing:
        raise DataError(f"{path}: missing columns {', '.join(missing)}")
    raw = _read(path, usecols=list(REQUIRED), dtype=_DTYPES)
    if raw.empty:
        raise DataError(f"{path}: no data rows, only a header")
    raw = raw.dropna()
    wrong = sorted(set(raw["Year"].astype("int64")) - {year})
    if wrong:
        raise DataError(f"{path}: holds flights of {', '.join(map(str, wrong))}, but the file is for {year}")
    column = "CRSDepTime" if dep_time is DepTime.SCHEDULED else "DepTime"
    return task_frame(
        month=raw["Month"],
        day_of_month=raw["DayofMonth"],
        day_of_week=raw["DayOfWeek"],
        dep_time=raw[column],
        carrier=raw["UniqueCarrier"],
        origin=raw["Origin"],
        dest=raw["Dest"],
        distance=raw["Distance"],
        delay_min=raw["DepDelay"],
        row_id=pd.Series(raw.index, index=raw.index),
    )


def _describe(directory: Path, year: int) -> str:
    try:
        return str(year_file(directory, year))
    except DataError:
        return str(directory / f"{year}.csv")


class AsaExpo:
    """Source over a folder of ASA Data Expo year files; one period per year."""

    name: SourceName = "asa"
    default_sizes = DEFAULT_SIZES

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        early, middle, late = (Period(str(year), _describe(directory, year)) for year in YEARS)
        self.periods = (early, middle, late)

    def inputs(self) -> tuple[InputFile, ...]:
        if not self.directory.is_dir():
            raise DataError(f"{self.directory}: not a directory (expected the ASA year files there)")
        return tuple(fingerprint(year_file(self.directory, year)) for year in YEARS)

    def load(self, period: Period, dep_time: DepTime) -> pd.DataFrame:
        year = int(period.name)
        return read_year(year_file(self.directory, year), year, dep_time)
