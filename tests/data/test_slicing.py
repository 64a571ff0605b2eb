import numpy as np
import pandas as pd
import pytest

from orchestrator.data.columns import LABEL, ROW_ID
from orchestrator.data.slicing import SliceSizes, check_sizes, draw_balanced, slices_of_period
from orchestrator.failures import DataError


def pool(n_pos: int, n_neg: int) -> pd.DataFrame:
    labels = ["Y"] * n_pos + ["N"] * n_neg
    order = np.random.default_rng(0).permutation(len(labels))  # pools arrive in any order
    return pd.DataFrame({LABEL: np.array(labels)[order], ROW_ID: np.arange(len(labels))[order]})


def draw(frame: pd.DataFrame, wanted: list, seed: int = 42) -> dict[str, pd.DataFrame]:
    return dict(draw_balanced(frame, wanted, seed=seed, period_index=1, period="P"))


def test_slices_are_exactly_balanced_and_disjoint() -> None:
    out = draw(pool(300, 900), [("eval", 100), ("holdout", 400)])
    for name, rows in (("eval", 100), ("holdout", 400)):
        assert len(out[name]) == rows
        assert (out[name][LABEL] == "Y").sum() == rows // 2
    assert not set(out["eval"][ROW_ID]) & set(out["holdout"][ROW_ID])


def test_draw_is_deterministic_and_independent_of_input_order() -> None:
    frame = pool(200, 200)
    first = draw(frame, [("train", 100)])["train"]
    again = draw(frame.sample(frac=1.0, random_state=3), [("train", 100)])["train"]
    assert first[ROW_ID].tolist() == again[ROW_ID].tolist()
    other_seed = draw(frame, [("train", 100)], seed=7)["train"]
    assert first[ROW_ID].tolist() != other_seed[ROW_ID].tolist()


def test_classes_are_interleaved_not_blocked() -> None:
    labels = draw(pool(500, 500), [("train", 200)])["train"][LABEL]
    assert labels.iloc[:100].nunique() == 2


def test_shortfall_names_slice_period_and_counts() -> None:
    with pytest.raises(DataError) as exc:
        draw(pool(120, 900), [("eval", 100), ("holdout", 200)])
    message = str(exc.value)
    for part in (
        "'holdout'",
        "200 rows",
        "period P",
        "120 Y",
        "900 N",
        "50 Y + 50 N already went to 'eval'",
        "at most 140",
    ):
        assert part in message


@pytest.mark.parametrize("rows", [0, -2, 7])
def test_odd_or_non_positive_size_names_the_slice(rows: int) -> None:
    with pytest.raises(DataError, match=f"slice 'later': size {rows} must be a positive even number"):
        check_sizes(SliceSizes(train=2, eval=2, holdout=2, later=rows))


def test_slice_to_period_mapping() -> None:
    assert [slices_of_period(i) for i in range(3)] == [("train",), ("eval", "holdout"), ("later",)]
