"""Every registry metric against scikit-learn/numpy on fixed inputs; the prediction checks, hostile."""

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics as skm

from orchestrator.failures import DataError, UnscorableArtifact
from orchestrator.scoring.metrics import compute_metrics
from orchestrator.scoring.tasktypes import TaskScoring
from orchestrator.specs.tasktypes import METRICS
from orchestrator.stats.auc import auc_se

RNG = np.random.default_rng(0)
Y_BIN = RNG.integers(0, 2, 500)
P_BIN = np.clip(Y_BIN * 0.3 + RNG.random(500) * 0.7, 0, 1)
Y_MC = RNG.integers(0, 3, 400)
_raw = RNG.random((400, 3)) + np.eye(3)[Y_MC] * 0.8
P_MC = _raw / _raw.sum(axis=1, keepdims=True)
Y_REG = RNG.normal(10, 3, 300)
P_REG = Y_REG + RNG.normal(0, 1.5, 300)

EXPECTED = {
    ("binary", "auc"): skm.roc_auc_score(Y_BIN, P_BIN),
    ("binary", "ap"): skm.average_precision_score(Y_BIN, P_BIN),
    ("binary", "log_loss"): skm.log_loss(Y_BIN, P_BIN),
    ("binary", "brier"): skm.brier_score_loss(Y_BIN, P_BIN),
    ("binary", "accuracy"): skm.accuracy_score(Y_BIN, P_BIN >= 0.5),
    ("multiclass", "log_loss"): skm.log_loss(Y_MC, P_MC, labels=[0, 1, 2]),
    ("multiclass", "accuracy"): skm.accuracy_score(Y_MC, P_MC.argmax(axis=1)),
    ("multiclass", "macro_f1"): skm.f1_score(Y_MC, P_MC.argmax(axis=1), average="macro"),
    ("regression", "rmse"): math.sqrt(np.mean((Y_REG - P_REG) ** 2)),
    ("regression", "mae"): np.mean(np.abs(Y_REG - P_REG)),
    ("regression", "r2"): 1 - np.sum((Y_REG - P_REG) ** 2) / np.sum((Y_REG - Y_REG.mean()) ** 2),
}
DATA = {"binary": (Y_BIN, P_BIN), "multiclass": (Y_MC, P_MC), "regression": (Y_REG, P_REG)}


def _scoring(task_type: str, metric: str) -> TaskScoring:
    return TaskScoring(task_type=task_type, metric=metric, classes=("a", "b", "c") if task_type == "multiclass" else ())


def test_every_registry_metric_is_checked_here() -> None:
    assert set(EXPECTED) == {(k, m) for k, ms in METRICS.items() for m in ms}


@pytest.mark.parametrize(("task_type", "metric"), sorted(EXPECTED))
def test_each_metric_agrees_with_sklearn_and_has_a_standard_error(task_type: str, metric: str) -> None:
    y, p = DATA[task_type]
    s = _scoring(task_type, metric).score(y, p)
    assert s.value == pytest.approx(EXPECTED[(task_type, metric)], rel=1e-12, abs=1e-12)
    assert s.metric == metric and s.n == len(y) and s.direction == METRICS[task_type][metric].direction
    assert s.se is not None and 0 < s.se < 0.2 * max(abs(s.value), 1.0)
    again = _scoring(task_type, metric).score(y, p)
    assert again.se == s.se  # seeded: the same predictions give the same SE


def test_binary_auc_is_exactly_todays_figures() -> None:
    s = TaskScoring().score(Y_BIN, P_BIN)
    m = compute_metrics(Y_BIN, P_BIN)
    assert (s.value, s.se) == (m.auc, m.auc_se)
    assert s.se == auc_se(m.auc, int(Y_BIN.sum()), len(Y_BIN) - int(Y_BIN.sum()))


def test_mean_standard_errors_are_the_analytic_ones() -> None:
    mae = TaskScoring(task_type="regression", metric="mae").score(Y_REG, P_REG)
    assert mae.se == pytest.approx(np.std(np.abs(Y_REG - P_REG), ddof=1) / math.sqrt(300))
    rmse = TaskScoring(task_type="regression", metric="rmse").score(Y_REG, P_REG)
    se_mse = np.std((Y_REG - P_REG) ** 2, ddof=1) / math.sqrt(300)
    assert rmse.se == pytest.approx(se_mse / (2 * rmse.value))
    acc = TaskScoring(task_type="multiclass", metric="accuracy", classes=("a", "b", "c")).score(Y_MC, P_MC)
    hits = (P_MC.argmax(axis=1) == Y_MC).astype(float)
    assert acc.se == pytest.approx(np.std(hits, ddof=1) / math.sqrt(400))


def test_a_metric_the_type_has_not_is_refused() -> None:
    with pytest.raises(ValueError, match="allowed: rmse, mae, r2"):
        TaskScoring(task_type="regression", metric="auc")


# --- labels ------------------------------------------------------------------------------------------------


def test_labels_of_each_type_are_read_strictly(tmp_path: Path) -> None:
    f = tmp_path / "labels.csv"
    f.write_text("y\n1.5\n-2\n3e2\n")
    assert TaskScoring(target="y", task_type="regression", metric="rmse").read_labels(f).tolist() == [1.5, -2, 300]
    f.write_text("y\nb\nc\na\n")
    mc = TaskScoring(target="y", task_type="multiclass", metric="accuracy", classes=("c", "a", "b"))
    assert mc.read_labels(f).tolist() == [2, 0, 1]
    f.write_text("y\nN\nY\n")  # the labels of a binary task are its own: here Y is the negative class
    assert TaskScoring(target="y", positive="N", negative="Y").read_labels(f).tolist() == [1, 0]
    for text, scoring in (("y\n1.5\nabc\n", TaskScoring(target="y", task_type="regression", metric="rmse")),
                          ("y\n1.5\ninf\n", TaskScoring(target="y", task_type="regression", metric="rmse")),
                          ("y\na\nd\n", mc), ("y\nY\nmaybe\n", TaskScoring(target="y"))):
        f.write_text(text)
        with pytest.raises(DataError):
            scoring.read_labels(f)


# --- the prediction contract, hostile -------------------------------------------------------------------------

REG = TaskScoring(task_type="regression", metric="rmse", predict="predict")
MC = TaskScoring(task_type="multiclass", metric="log_loss", classes=("a", "b", "c"))
BIN = TaskScoring()


@pytest.mark.parametrize(("scoring", "shape", "values", "reason", "needle"), [
    (BIN, (3, 2), np.full(6, 0.5), "wrong_shape", "expected (3,)"),
    (BIN, (3,), np.array([0.1, np.inf, 0.2]), "not_finite", "1 of 3"),
    (BIN, (3,), np.array([0.1, 1.2, 0.2]), "out_of_range", "outside [0, 1]"),
    (MC, (3,), np.full(3, 0.5), "wrong_shape", "expected (3, 3) (one column per class of ['a', 'b', 'c'])"),
    (MC, (3, 2), np.full(6, 0.5), "wrong_shape", "expected (3, 3)"),
    (MC, (3, 4), np.full(12, 0.25), "wrong_shape", "expected (3, 3)"),
    (MC, (3, 3), np.array([0.2, 0.3, 0.5, np.nan, 0.5, 0.5, 0.1, 0.1, 0.8]), "not_finite", "1 NaN"),
    (MC, (3, 3), np.array([0.2, 0.3, 0.5, -0.5, 0.5, 1.0, 0.1, 0.1, 0.8]), "out_of_range", "outside [0, 1]"),
    (MC, (3, 3), np.array([0.2, 0.3, 0.5, 0.5, 0.5, 0.5, 0.1, 0.1, 0.8]), "not_a_distribution", "sums to 1.5"),
    (REG, (3, 1), np.zeros(3), "wrong_shape", "predict returned shape (3, 1)"),
    (REG, (3,), np.array([1.0, np.nan, 2.0]), "not_finite", "1 NaN"),
    (REG, (3,), np.array([1.0, -np.inf, 2.0]), "not_finite", "0 NaN"),
])
def test_each_broken_prediction_is_unscorable_with_its_reason(scoring: TaskScoring, shape: tuple, values: np.ndarray,
                                                              reason: str, needle: str) -> None:
    with pytest.raises(UnscorableArtifact) as err:
        scoring.check(shape, values, 3)
    assert err.value.reason == reason
    assert needle in err.value.detail


def test_good_predictions_pass_in_their_shape() -> None:
    assert REG.check((3,), np.array([-1e6, 0.0, 3.5]), 3).tolist() == [-1e6, 0.0, 3.5]
    good = np.array([0.2, 0.3, 0.5, 0.0, 0.0, 1.0, 1 / 3, 1 / 3, 1 / 3])
    assert MC.check((3, 3), good, 3).shape == (3, 3)
    assert BIN.check((3,), np.array([0.0, 0.5, 1.0]), 3).tolist() == [0.0, 0.5, 1.0]


def test_the_macro_f1_the_bootstrap_resamples_is_sklearns() -> None:
    from orchestrator.scoring.tasktypes import _macro_f1

    for seed in range(5):
        rng = np.random.default_rng(seed)
        y, p = rng.integers(0, 4, 50), rng.random((50, 4))
        t = TaskScoring(task_type="multiclass", metric="macro_f1", classes=("a", "b", "c", "d"))
        assert _macro_f1(y, p, t) == skm.f1_score(y, p.argmax(axis=1), labels=[0, 1, 2, 3], average="macro",
                                                  zero_division=0)


# --- the data of other task types, read on the host -------------------------------------------------------------


def test_a_regression_and_a_multiclass_folder_read_with_their_labels(tmp_path: Path) -> None:
    from othertasks import ORIGINS, make_folder

    from orchestrator.scoring.data import labelled_rows, load_hidden, row_space

    sizes = {"train": 300, "eval": 100, "holdout": 200, "later": 100}
    reg = make_folder(tmp_path / "reg", "arr_delay", sizes=sizes)
    scoring = TaskScoring(target="arr_delay", task_type="regression", metric="mae", predict="predict")
    hidden = load_hidden(reg, "holdout", scoring=scoring)
    import pandas as pd

    assert hidden.labels.dtype == np.float64
    assert hidden.labels.tolist() == pd.read_csv(reg / "holdout.labels.csv")["arr_delay"].astype(float).tolist()
    ev = labelled_rows(reg / "eval.csv", scoring=scoring)
    assert ev.labels.tolist() == pd.read_csv(reg / "eval.csv")["arr_delay"].astype(float).tolist()
    assert row_space(hidden, ev, None).layout.n_eval == 100
    mc = make_folder(tmp_path / "mc", "Origin", sizes=sizes)
    scoring = TaskScoring(target="Origin", task_type="multiclass", metric="accuracy", classes=ORIGINS)
    labels = load_hidden(mc, "later", scoring=scoring).labels
    assert [ORIGINS[i] for i in labels] == pd.read_csv(mc / "later.labels.csv")["Origin"].tolist()
    with pytest.raises(DataError, match="not one of the classes"):
        load_hidden(mc, "later", scoring=TaskScoring(target="Origin", task_type="multiclass", metric="accuracy",
                                                     classes=("EWR", "JFK")))


def test_a_binary_task_with_other_label_values_scores_by_them(tmp_path: Path) -> None:
    """positive_label "N" used to fail ("labels are neither 'N' nor 'N'"): the task's negative_label is read."""
    import yaml

    from orchestrator.specs import load_task

    data = yaml.safe_load((load_task("flight-delays").root / "task.yaml").read_text())
    data.update(positive_label="N", negative_label="Y")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "train.py").write_text("")
    (tmp_path / "task.yaml").write_text(yaml.safe_dump(data))
    scoring = TaskScoring.of(load_task(tmp_path))
    assert (scoring.positive, scoring.negative, scoring.predict) == ("N", "Y", "predict_proba")
    f = tmp_path / "labels.csv"
    f.write_text("dep_delayed_15min\nY\nN\nN\n")
    assert scoring.read_labels(f).tolist() == [0, 1, 1]


@pytest.mark.parametrize("metric, expected", [
    ("rmse", lambda y, p: skm.root_mean_squared_error(np.log1p(y), np.log1p(p))),
    ("mae", lambda y, p: skm.mean_absolute_error(np.log1p(y), np.log1p(p))),
    ("r2", lambda y, p: skm.r2_score(np.log1p(y), np.log1p(p))),
])
def test_a_log1p_regression_scores_the_logs(metric: str, expected) -> None:
    y, p = np.abs(Y_REG) * 40, np.abs(P_REG) * 40  # counts: errors that are relative
    t = TaskScoring(target="y", task_type="regression", metric=metric, predict="predict", transform="log1p")
    score = t.score(y, p)
    assert score.value == pytest.approx(expected(y, p), rel=1e-12)
    plain = TaskScoring(target="y", task_type="regression", metric=metric, predict="predict").score(y, p)
    assert plain.value != pytest.approx(score.value) and score.se is not None and score.se > 0


def test_a_log1p_regression_refuses_values_it_cannot_take() -> None:
    t = TaskScoring(target="y", task_type="regression", metric="rmse", predict="predict", transform="log1p")
    bad = np.array([3.0, -1.0, 2.0, -4.5])
    with pytest.raises(UnscorableArtifact, match="2 of 4 predictions are <= -1"):
        t.check((4,), bad, 4)
    with pytest.raises(DataError, match="log1p transform needs every label > -1"):
        t.check_labels(bad, "holdout")
    assert t.check((4,), np.array([3.0, -0.5, 0.0, 9.0]), 4).tolist() == [3.0, -0.5, 0.0, 9.0]


def test_only_a_regression_task_has_a_transform_and_the_flight_dump_keeps_its_keys() -> None:
    from pydantic import ValidationError

    from orchestrator.specs import load_task

    flight = load_task("flight-delays")
    assert flight.transform == "none" and "transform" not in flight.model_dump(mode="json")
    with pytest.raises(ValidationError, match="only a regression task has one"):
        type(flight).model_validate({**flight.model_dump(mode="json"), "transform": "log1p"})
    nyc = load_task("nyc-arrival-delay")
    logged = type(nyc).model_validate({**nyc.model_dump(mode="json"), "transform": "log1p"})
    assert TaskScoring.of(logged).transform == "log1p" and logged.model_dump(mode="json")["transform"] == "log1p"
