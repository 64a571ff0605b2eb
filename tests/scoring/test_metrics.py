import math
from pathlib import Path

import numpy as np
import pytest

from orchestrator.failures import DataError, UnscorableArtifact
from orchestrator.scoring.metrics import check_predictions, compute_metrics, read_labels
from orchestrator.stats.auc import auc_se


def test_metrics_agree_with_sklearn() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 1000)
    p = np.clip(y * 0.3 + rng.random(1000) * 0.7, 0, 1)
    m = compute_metrics(y, p)
    from sklearn.metrics import average_precision_score, roc_auc_score

    assert m.auc == pytest.approx(roc_auc_score(y, p))
    assert m.ap == pytest.approx(average_precision_score(y, p))
    assert m.n == 1000 and m.positives == int(y.sum())
    # the scorer's SE is the statistics' Hanley-McNeil SE (tests/stats/test_auc.py checks it against the paper)
    assert m.auc_se == auc_se(m.auc, m.positives, 1000 - m.positives)


@pytest.mark.parametrize(
    ("shape", "values", "reason"),
    [
        ((3, 2), np.zeros(6), "wrong_shape"),
        ((2,), np.zeros(2), "wrong_shape"),
        ((), np.zeros(1), "wrong_shape"),
        ((3,), np.array([0.1, math.nan, 0.2]), "not_finite"),
        ((3,), np.array([0.1, math.inf, 0.2]), "not_finite"),
        ((3,), np.array([0.1, 1.0000001, 0.2]), "out_of_range"),
        ((3,), np.array([-0.0001, 0.5, 0.2]), "out_of_range"),
    ],
)
def test_predictions_are_checked_strictly(shape, values, reason) -> None:
    with pytest.raises(UnscorableArtifact) as exc:
        check_predictions(shape, values, 3)
    assert exc.value.reason == reason


def test_valid_predictions_pass_including_the_ends() -> None:
    values = np.array([0.0, 0.5, 1.0])
    assert check_predictions((3,), values, 3) is values


def test_labels_are_read_strictly(tmp_path: Path) -> None:
    good = tmp_path / "good.csv"
    good.write_text("dep_delayed_15min\nY\nN\nY\n")
    assert read_labels(good, "dep_delayed_15min").tolist() == [1, 0, 1]
    for name, text in {"other.csv": "label\nY\nN\n", "bad.csv": "dep_delayed_15min\nY\nmaybe\n",
                       "one.csv": "dep_delayed_15min\nY\nY\n", "two.csv": "dep_delayed_15min,x\nY,1\nN,2\n"}.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(DataError):
            read_labels(tmp_path / name, "dep_delayed_15min")
