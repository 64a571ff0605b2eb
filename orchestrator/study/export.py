"""One row per run attempt of a study, for pandas, R and `sbx report`: the record of run/record.py, with
times as ISO 8601 (UTC).

The CSV is written from the record's columns with the csv module, cell for cell as pandas' `to_csv` of
the study's frame writes it (the export wrote that frame before issue 23, and tests/study/test_export_csv.py
holds the two byte-identical): building a frame of 100,000 runs only to print it cost more than reading the
ledger. Parquet and the report's frame are pandas' own.
"""

from __future__ import annotations

import csv
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.failures import ConfigError
from orchestrator.ledger import Ledger
from orchestrator.run.record import TIME_COLUMNS, Columns, study_table
from orchestrator.study.status import study_id_of

if TYPE_CHECKING:
    import pandas as pd

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def runs_frame(ledger: Ledger, study_id: str) -> pd.DataFrame:
    """The study's runs as a frame; time columns are timezone-aware datetimes (UTC)."""
    return _frame(study_table(ledger, study_id))


def _frame(columns: Columns) -> pd.DataFrame:
    import pandas as pd  # here, not at import: only the commands that build a frame pay for it

    frame = pd.DataFrame(columns)
    for column in TIME_COLUMNS:
        if column in frame:
            frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
    return frame


def export(ledger: Ledger, name: str, fmt: str, out: Path) -> tuple[Path, int]:
    """Write the study's runs to `out` as CSV or Parquet; returns the path and the number of rows."""
    if fmt not in ("csv", "parquet"):
        raise ConfigError(f"unknown export format {fmt!r}; use csv or parquet")
    columns = study_table(ledger, study_id_of(ledger, name))
    rows = len(columns["run_id"]) if columns else 0
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        write_csv(columns, out)
    else:
        try:
            _frame(columns).to_parquet(out, index=False)
        except ImportError:
            raise ConfigError("parquet export needs pyarrow: pip install 'sbx[parquet]'") from None
    return out, rows


def write_csv(columns: Columns, out: Path) -> None:
    """The columns as CSV, as `_frame(columns)` with ISO 8601 times writes through pandas' `to_csv(index=False)`."""
    cells = [_iso_cells(values) if name in TIME_COLUMNS else _cells(values) for name, values in columns.items()]
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, lineterminator="\n")  # pandas' defaults: minimal quoting, '"' doubled
        writer.writerow(list(columns))
        writer.writerows(zip(*cells, strict=True))


def _cells(values: list[Any]) -> list[Any]:
    """One column's values as pandas writes the column it infers from them; the csv module writes None as
    an empty cell and other values by str() (a float's repr), as pandas' object and string columns do."""
    kinds = set(map(type, values)) - {type(None)}
    if (kinds <= {int, float} and float in kinds) or (kinds == {int} and None in values):
        # a float64 column (ints with None become floats, as in pandas): NaN is an empty cell
        return [None if v is None or v != v else float(v) for v in values]
    if kinds <= {bool, int, str}:  # bool, int64, string or object columns without NaN: written as they are
        return values
    return [None if isinstance(v, float) and math.isnan(v) else v for v in values]  # an object column


def _iso_cells(values: list[float | None]) -> list[str | None]:
    """Unix seconds as pandas' `to_datetime(unit="s", utc=True)` then `Timestamp.isoformat()` writes them:
    a whole nanosecond count from the float (its fraction rounded to 9 digits, then truncated, as pandas
    casts), shown to the microsecond, and to the nanosecond when there are any."""
    out: list[str | None] = []
    days: dict[int, str] = {}
    for t in values:
        if t is None or t != t:
            out.append(None)
            continue
        whole = int(t)
        ns = whole * 1_000_000_000 + int(round((t - whole) * 1e9) / 1e9 * 1e9)
        seconds, fraction = divmod(ns, 1_000_000_000)
        day, second = divmod(seconds, 86_400)
        if day not in days:
            days[day] = (_EPOCH + timedelta(days=day)).date().isoformat()
        hour, second = divmod(second, 3600)
        minute, second = divmod(second, 60)
        # Timestamp.isoformat: no fraction, the microseconds, or (any nanoseconds) all nine digits
        frac = "" if not fraction else f".{fraction:09d}" if fraction % 1000 else f".{fraction // 1000:06d}"
        out.append(f"{days[day]}T{hour:02d}:{minute:02d}:{second:02d}{frac}+00:00")
    return out
