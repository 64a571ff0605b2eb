import pandas as pd

from orchestrator.data.columns import (
    FEATURES,
    LABEL,
    ROW_ID,
    DepTime,
    calendar_code,
    label_from_delay,
    task_frame,
)


def test_label_rule_is_at_least_15_minutes() -> None:
    labels = label_from_delay(pd.Series([14.0, 15.0, 14.999, -7.0, 0.0, 300.0]))
    assert labels.tolist() == ["N", "Y", "N", "N", "N", "Y"]
    assert labels.name == LABEL


def test_calendar_codes_look_like_the_reference_files() -> None:
    assert calendar_code(pd.Series([1, 4.0, 31])).tolist() == ["c-1", "c-4", "c-31"]


def test_task_frame_has_fixed_columns_and_types() -> None:
    one = pd.Series([1])
    frame = task_frame(
        month=one,
        day_of_month=one,
        day_of_week=one,
        dep_time=pd.Series([905.0]),
        carrier=pd.Series(["AA"]),
        origin=pd.Series(["JFK"]),
        dest=pd.Series(["LAX"]),
        distance=pd.Series([2475.0]),
        delay_min=pd.Series([15.0]),
        row_id=pd.Series([7]),
    )
    assert list(frame.columns) == [*FEATURES, LABEL, ROW_ID]
    assert frame.loc[0, "DepTime"] == 905 and frame["DepTime"].dtype == "int64"
    assert frame["Distance"].dtype == "int64"
    assert frame.loc[0, LABEL] == "Y"
    assert pd.api.types.is_string_dtype(frame["UniqueCarrier"])


def test_dep_time_choices() -> None:
    assert [d.value for d in DepTime] == ["scheduled", "actual"]
