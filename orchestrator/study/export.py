"""One row per run attempt of a study, for pandas, R and `sbx report`: the record of run/record.py, with
times as ISO 8601 (UTC)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.failures import ConfigError
from orchestrator.ledger import Ledger
from orchestrator.run.record import TIME_COLUMNS, study_rows
from orchestrator.study.status import study_id_of

if TYPE_CHECKING:
    import pandas as pd


def runs_frame(ledger: Ledger, study_id: str) -> pd.DataFrame:
    """The study's runs as a frame; time columns are timezone-aware datetimes (UTC)."""
    import pandas as pd  # here, not at import: only the commands that build a frame pay for it

    frame = pd.DataFrame(study_rows(ledger, study_id))
    for column in TIME_COLUMNS:
        if column in frame:
            frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
    return frame


def export(ledger: Ledger, name: str, fmt: str, out: Path) -> tuple[Path, int]:
    """Write the study's runs to `out` as CSV or Parquet; returns the path and the number of rows."""
    import pandas as pd

    frame = runs_frame(ledger, study_id_of(ledger, name))
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        for column in TIME_COLUMNS:  # ISO 8601 with an explicit UTC offset
            if column in frame:
                frame[column] = frame[column].map(lambda t: t.isoformat() if pd.notna(t) else None)
        frame.to_csv(out, index=False)
    elif fmt == "parquet":
        try:
            frame.to_parquet(out, index=False)
        except ImportError:
            raise ConfigError("parquet export needs pyarrow: pip install 'sbx[parquet]'") from None
    else:
        raise ConfigError(f"unknown export format {fmt!r}; use csv or parquet")
    return out, len(frame)
