"""Task types in task.yaml: the metric is validated against the registry, the flight task's dump unchanged."""

from pathlib import Path

import pytest
import yaml

from orchestrator.failures import ConfigError
from orchestrator.specs import load_task
from orchestrator.specs.tasktypes import METRICS, metric_info

#: the flight task's model_dump before task types existed: its config hash depends on it
FLIGHT_DUMP = {
    "name": "flight-delays", "kind": "ml", "description": "Predict whether a flight departs at least 15 minutes late.",
    "metric": "auc", "target": "dep_delayed_15min", "positive_label": "Y", "data": "flights",
    "files": {"train": {"path": "train.csv", "to": "data/train.csv", "visible_to_agent": True},
              "eval": {"path": "eval.csv", "to": "data/eval.csv", "visible_to_agent": True},
              "holdout": {"features": "holdout.features.csv", "labels": "holdout.labels.csv",
                          "visible_to_agent": False},
              "later": {"features": "later.features.csv", "labels": "later.labels.csv", "visible_to_agent": False}},
    "repo": "repo",
    "contract": {"entrypoint": "train.py", "predict": "predict_proba", "eval_line": r"Eval AUC:\s*([0-9]*\.?[0-9]+)"},
    "environment": None,
}


def test_the_flight_task_dumps_exactly_as_before() -> None:
    t = load_task("flight-delays")
    assert t.model_dump(mode="json") == FLIGHT_DUMP
    assert (t.task_type, t.metric, t.negative_label, t.classes) == ("binary", "auc", "N", None)
    assert t.metric_info.direction == "higher"


def test_directions_of_the_registry() -> None:
    lower = {(k, m) for k, ms in METRICS.items() for m, i in ms.items() if i.direction == "lower"}
    assert lower == {("binary", "log_loss"), ("binary", "brier"), ("multiclass", "log_loss"),
                     ("regression", "rmse"), ("regression", "mae")}
    assert set(METRICS["binary"]) == {"auc", "ap", "log_loss", "brier", "accuracy"}
    assert set(METRICS["multiclass"]) == {"log_loss", "accuracy", "macro_f1"}
    assert set(METRICS["regression"]) == {"rmse", "mae", "r2"}
    assert metric_info("binary", "auc").higher_is_better and not metric_info("regression", "mae").higher_is_better


def _task(tmp_path: Path, **changes: object) -> Path:
    data = dict(FLIGHT_DUMP)
    data.pop("environment")
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    (tmp_path / "repo").mkdir(exist_ok=True)
    (tmp_path / "repo" / "train.py").write_text("")
    (tmp_path / "task.yaml").write_text(yaml.safe_dump(data))
    return tmp_path


def test_a_regression_task_takes_its_default_metric_and_dumps_its_type(tmp_path: Path) -> None:
    t = load_task(_task(tmp_path, task_type="regression", metric=None, positive_label=None))
    assert (t.task_type, t.metric, t.metric_info.direction) == ("regression", "rmse", "lower")
    dump = t.model_dump(mode="json")
    assert dump["task_type"] == "regression" and dump["metric"] == "rmse" and "classes" not in dump


def test_a_multiclass_task_lists_its_classes(tmp_path: Path) -> None:
    t = load_task(_task(tmp_path, task_type="multiclass", metric="macro_f1", positive_label=None,
                        classes=["a", "b", "c"]))
    assert t.classes == ("a", "b", "c") and t.model_dump()["classes"] == ("a", "b", "c")


@pytest.mark.parametrize(("changes", "message"), [
    ({"metric": "rmse"}, "metric 'rmse' is not a binary metric; allowed: auc, ap, log_loss, brier, accuracy"),
    ({"task_type": "regression", "metric": "auc", "positive_label": None},
     "metric 'auc' is not a regression metric; allowed: rmse, mae, r2"),
    ({"task_type": "ranking"}, "task_type"),
    ({"task_type": "regression", "metric": "rmse"}, "only a binary task has one"),
    ({"positive_label": None}, "a binary task names its positive label"),
    ({"negative_label": "Y"}, "both 'Y'"),
    ({"task_type": "multiclass", "metric": "accuracy", "positive_label": None}, "at least two distinct"),
    ({"task_type": "multiclass", "metric": "accuracy", "positive_label": None, "classes": ["a", "a"]},
     "at least two distinct"),
    ({"classes": ["a", "b"]}, "only a multiclass task has them"),
])
def test_a_wrong_type_or_metric_is_a_clear_error(tmp_path: Path, changes: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_task(_task(tmp_path, **changes))
