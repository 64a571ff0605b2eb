"""The registry of ML task types and their metrics: names, direction and how a standard error is had.

Declarative only (no scikit-learn here): a task.yaml is validated against it in the specs layer, and the
scorer (orchestrator/scoring/metrics.py) computes each metric it names on the host. A test keeps the two
in step: every metric named here has a computation there, and no other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TaskType = Literal["binary", "multiclass", "regression"]
Direction = Literal["higher", "lower"]


@dataclass(frozen=True)
class MetricInfo:
    name: str
    direction: Direction          # which way is better
    #: how its standard error is had: "hanley_mcneil" (AUC), "mean" (the SE of a mean of per-row terms,
    #: sd/sqrt(n); via the delta method for RMSE), "bootstrap" (seeded resampling of the rows)
    se: Literal["hanley_mcneil", "mean", "bootstrap"]
    description: str

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher"

    @property
    def bounded(self) -> bool:
        """Whether every value lies in [0, 1] (a printed eval score outside it is not taken as one)."""
        return self.name in ("auc", "ap", "brier", "accuracy", "macro_f1")


def _m(name: str, direction: Direction, se: Literal["hanley_mcneil", "mean", "bootstrap"],
       description: str) -> tuple[str, MetricInfo]:
    return name, MetricInfo(name, direction, se, description)


#: task type -> its metrics, the first one the default
METRICS: dict[str, dict[str, MetricInfo]] = {
    "binary": dict([
        _m("auc", "higher", "hanley_mcneil", "area under the ROC curve of P(positive)"),
        _m("ap", "higher", "bootstrap", "average precision of P(positive)"),
        _m("log_loss", "lower", "mean", "mean negative log-likelihood of the labels (probabilities clipped "
                                        "to [1e-15, 1 - 1e-15])"),
        _m("brier", "lower", "mean", "mean squared difference of P(positive) and the 0/1 label"),
        _m("accuracy", "higher", "mean", "share of rows whose P(positive) >= 0.5 agrees with the label"),
    ]),
    "multiclass": dict([
        _m("log_loss", "lower", "mean", "mean negative log-likelihood of the true class"),
        _m("accuracy", "higher", "mean", "share of rows whose most probable class is the true one"),
        _m("macro_f1", "higher", "bootstrap", "unweighted mean over classes of F1 of the most probable class"),
    ]),
    "regression": dict([
        _m("rmse", "lower", "mean", "root mean squared error"),
        _m("mae", "lower", "mean", "mean absolute error"),
        _m("r2", "higher", "bootstrap", "coefficient of determination (1 - SSE/SST)"),
    ]),
}


def default_metric(task_type: str) -> str:
    return next(iter(METRICS[task_type]))


def metric_info(task_type: str, metric: str) -> MetricInfo:
    """The metric `metric` of `task_type`; ValueError naming the allowed ones otherwise."""
    if task_type not in METRICS:
        raise ValueError(f"task_type {task_type!r} is not one of {', '.join(METRICS)}")
    known = METRICS[task_type]
    if metric not in known:
        raise ValueError(f"metric {metric!r} is not a {task_type} metric; allowed: {', '.join(known)}")
    return known[metric]


def metric_by_name(metric: str) -> MetricInfo:
    """A metric by its name alone (a runs table names the metric, not the task type). A name the registry
    gives to several types (log_loss, accuracy) has one direction in all of them, which a test keeps so."""
    for known in METRICS.values():
        if metric in known:
            return known[metric]
    names = sorted({m for known in METRICS.values() for m in known})
    raise ValueError(f"metric {metric!r} is not one of {', '.join(names)}")


def direction_words(metric: str | None) -> str:
    """How a report names a metric and its direction: 'rmse (lower is better)'; an unnamed one is a score
    ranked higher-is-better (a runs table from before metrics had names)."""
    if metric is None:
        return "score (higher is better)"
    return f"{metric} ({metric_by_name(metric).direction} is better)"
