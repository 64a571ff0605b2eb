"""Step B by task type, on the host: the labels read strictly, the predictions checked strictly, the task's
metric computed as scikit-learn defines it (scoring/formulas.py; the registry of names and directions is
orchestrator/specs/tasktypes.py).

A `TaskScoring` is what scoring needs of a task: its target column, type, metric, label values and the
contract's prediction function. Binary with AUC is the flight task's scoring, with exactly its figures.
Nothing the scored code returns is trusted: a failed check is an UnscorableArtifact with a REASONS key.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from orchestrator.failures import DataError, UnscorableArtifact
from orchestrator.scoring import formulas
from orchestrator.specs.tasktypes import METRICS, MetricInfo, metric_info
from orchestrator.stats.auc import auc_se

if TYPE_CHECKING:
    from orchestrator.specs.task import TaskSpec

#: how far a multiclass row's probabilities may sum from 1 (float32 softmax outputs are off by ~1e-7)
SUM_TOLERANCE = 1e-4
#: resamples and seed of a bootstrap standard error (fixed: the same predictions give the same SE)
BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED = 200, 20250101
#: probabilities are clipped this far from 0 and 1 for the log loss (scikit-learn's own choice for float64)
LOG_LOSS_EPS = 1e-15


@dataclass(frozen=True)
class TaskScoring:
    """What the scorer needs of a task (hashable: it keys the cached label reads)."""

    target: str = "dep_delayed_15min"
    task_type: str = "binary"
    metric: str = "auc"
    positive: str = "Y"
    negative: str = "N"
    classes: tuple[str, ...] = ()
    predict: str = "predict_proba"
    #: regression: "log1p" scores log(1 + y) against log(1 + prediction) (TaskSpec.transform)
    transform: str = "none"

    def __post_init__(self) -> None:
        metric_info(self.task_type, self.metric)  # ValueError for a metric the type has not
        if self.task_type == "multiclass" and len(self.classes) < 2:
            raise ValueError("a multiclass scoring needs at least two classes")

    @classmethod
    def of(cls, task: TaskSpec) -> TaskScoring:
        return cls(target=task.target, task_type=task.task_type, metric=task.metric,
                   positive=task.positive_label or "Y", negative=task.negative_label,
                   classes=tuple(task.classes or ()), predict=task.contract.predict, transform=task.transform)

    @property
    def info(self) -> MetricInfo:
        return metric_info(self.task_type, self.metric)

    @property
    def columns(self) -> int:
        """How many numbers the prediction function returns per row."""
        return len(self.classes) if self.task_type == "multiclass" else 1

    # --- labels (our data: anything wrong is a DataError) --------------------------------------------------

    def labels(self, values: list[str] | np.ndarray, where: str) -> np.ndarray:
        """Label texts as the scorer's labels: 0/1 (binary), class indices (multiclass), floats (regression)."""
        values = np.asarray(values, dtype=object)
        if self.task_type == "binary":
            bad = ~np.isin(values, [self.positive, self.negative])
            if bad.any():
                raise DataError(f"{where}: {int(bad.sum())} labels are neither {self.positive!r} nor "
                                f"{self.negative!r} (first: {values[bad][0]!r})")
            return (values == self.positive).astype(np.int8)
        if self.task_type == "multiclass":
            index = {c: i for i, c in enumerate(self.classes)}
            bad = np.array([v not in index for v in values], dtype=bool)
            if bad.any():
                raise DataError(f"{where}: {int(bad.sum())} labels are not one of the classes {list(self.classes)} "
                                f"(first: {values[bad][0]!r})")
            return np.array([index[v] for v in values], dtype=np.int64)
        out = np.empty(len(values), dtype=np.float64)
        for i, v in enumerate(values):
            try:
                out[i] = float(v)
            except (TypeError, ValueError):
                raise DataError(f"{where}: label {v!r} (row {i + 1}) is not a number") from None
        if not np.isfinite(out).all():
            raise DataError(f"{where}: {int((~np.isfinite(out)).sum())} labels are not finite numbers")
        return out

    def read_labels(self, path: Path) -> np.ndarray:
        """A hidden set's labels, from a one-column CSV named as the target, checked to let the metric exist."""
        import pandas as pd

        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (OSError, ValueError) as exc:
            raise DataError(f"{path}: cannot read the labels ({exc})") from None
        if list(frame.columns) != [self.target]:
            raise DataError(f"{path}: expected exactly one column {self.target!r}, found {list(frame.columns)}")
        y = self.labels(frame[self.target].to_numpy(), str(path))
        self.check_labels(y, str(path))
        return y

    def check_labels(self, y: np.ndarray, where: str) -> None:
        """A scored set's labels must let the metric exist."""
        if len(y) == 0:
            raise DataError(f"{where}: no labels")
        if self.task_type == "binary" and len(y) and y.min() == y.max():
            raise DataError(f"{where}: all {len(y)} labels are the same class; an AUC needs both")
        if self.task_type == "regression" and len(y) > 1 and self.metric == "r2" and np.ptp(y) == 0:
            raise DataError(f"{where}: all {len(y)} labels are equal; R² is undefined")
        if self.transform == "log1p" and (y <= -1.0).any():
            raise DataError(f"{where}: {int((y <= -1.0).sum())} labels are <= -1 (min {y.min():.6g}); the task's "
                            "log1p transform needs every label > -1")

    # --- predictions (the scored code's: anything wrong is an UnscorableArtifact) --------------------------

    def check(self, shape: tuple[int, ...], values: np.ndarray, rows: int) -> np.ndarray:
        """The values of one batch of `rows` rows, shaped (rows,) or (rows, classes), if they are what the
        contract promises; else UnscorableArtifact with the reason."""
        fn = self.predict
        want = (rows, self.columns) if self.task_type == "multiclass" else (rows,)
        if shape != want:
            extra = f" (one column per class of {list(self.classes)})" if self.task_type == "multiclass" else ""
            raise UnscorableArtifact("wrong_shape", f"{fn} returned shape {shape} for a batch of {rows} rows, "
                                                    f"expected {want}{extra}")
        finite = np.isfinite(values)
        if not finite.all():
            nan = int(np.isnan(values).sum())
            raise UnscorableArtifact("not_finite", f"{int((~finite).sum())} of {values.size} predictions are not "
                                                   f"finite ({nan} NaN) in a batch of {rows} rows")
        if self.task_type == "regression":
            if self.transform == "log1p" and (values <= -1.0).any():
                raise UnscorableArtifact("out_of_range", f"{int((values <= -1.0).sum())} of {values.size} "
                                                        f"predictions are <= -1 (min {values.min():.6g}); the "
                                                        "task scores log(1 + prediction)")
            return values
        outside = (values < 0.0) | (values > 1.0)
        if outside.any():
            raise UnscorableArtifact("out_of_range", f"{int(outside.sum())} of {values.size} predictions lie "
                                                    f"outside [0, 1] (min {values.min():.6g}, max "
                                                    f"{values.max():.6g})")
        if self.task_type == "multiclass":
            matrix = values.reshape(want)
            off = np.abs(matrix.sum(axis=1) - 1.0)
            if (off > SUM_TOLERANCE).any():
                worst = int(np.argmax(off))
                raise UnscorableArtifact("not_a_distribution",
                                         f"{int((off > SUM_TOLERANCE).sum())} of {rows} rows of {fn} do not sum "
                                         f"to 1 within {SUM_TOLERANCE:g} (one sums to "
                                         f"{matrix[worst].sum():.6g})")
            return matrix
        return values

    # --- the metric ----------------------------------------------------------------------------------------

    def score(self, y: np.ndarray, p: np.ndarray, with_se: bool = True) -> Score:
        """The task's metric of predictions `p` for labels `y`, with its standard error (`with_se`)."""
        if len(y) != len(p):
            raise ValueError(f"{len(y)} labels and {len(p)} predictions")
        fn = _METRIC_FUNCTIONS[(self.task_type, self.metric)]
        if self.transform == "log1p":  # the metric, and its SE, of the transformed values
            y, p = np.log1p(y), np.log1p(p)
        value = fn(y, p, self)
        info = self.info
        se: float | None
        if not with_se:
            se = None
        elif info.se == "hanley_mcneil":
            positives = int(y.sum())
            se = auc_se(value, positives, len(y) - positives)
        elif info.se == "mean":
            se = _mean_se(self, y, p, value)
        else:
            se = _bootstrap_se(fn, y, p, self)
        return Score(metric=self.metric, value=value, se=se, direction=info.direction, n=len(y))


@dataclass(frozen=True)
class Score:
    metric: str
    value: float
    se: float | None
    direction: str
    n: int


# --- the computations (numpy, scikit-learn's definitions: scoring/formulas.py) -------------------------------

Fn = Callable[[np.ndarray, np.ndarray, TaskScoring], float]


def _auc(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    return formulas.roc_auc(y, p)


def _ap(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    return formulas.average_precision(y, p)


def _log_loss(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    return float(np.mean(_log_loss_terms(y, p, t)))


def _log_loss_terms(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> np.ndarray:
    """Per-row negative log-likelihood, as scikit-learn's log_loss computes it (clipped, then renormalised)."""
    matrix = np.column_stack([1.0 - p, p]) if t.task_type == "binary" else p
    matrix = np.clip(matrix, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    matrix = matrix / matrix.sum(axis=1, keepdims=True)
    return -np.log(matrix[np.arange(len(y)), y.astype(int)])


def _brier(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    return formulas.brier(y, p)


def _hits(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> np.ndarray:
    guess = (p >= 0.5).astype(int) if t.task_type == "binary" else np.argmax(p, axis=1)
    return (guess == y).astype(float)


def _accuracy(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    guess = (p >= 0.5).astype(int) if t.task_type == "binary" else np.argmax(p, axis=1)
    return formulas.accuracy(y, guess)


def _macro_f1(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    # every declared class counts, present or not (a class never predicted nor seen scores 0)
    return formulas.macro_f1(y, np.argmax(p, axis=1), len(t.classes))


def _rmse(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    return math.sqrt(formulas.mean_squared_error(y, p))


def _mae(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    return formulas.mean_absolute_error(y, p)


def _r2(y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float:
    return formulas.r2(y, p)


_METRIC_FUNCTIONS: dict[tuple[str, str], Fn] = {
    ("binary", "auc"): _auc, ("binary", "ap"): _ap, ("binary", "log_loss"): _log_loss,
    ("binary", "brier"): _brier, ("binary", "accuracy"): _accuracy,
    ("multiclass", "log_loss"): _log_loss, ("multiclass", "accuracy"): _accuracy,
    ("multiclass", "macro_f1"): _macro_f1,
    ("regression", "rmse"): _rmse, ("regression", "mae"): _mae, ("regression", "r2"): _r2,
}
assert set(_METRIC_FUNCTIONS) == {(k, m) for k, ms in METRICS.items() for m in ms}, "registry and code differ"


def _mean_se(t: TaskScoring, y: np.ndarray, p: np.ndarray, value: float) -> float | None:
    """The analytic SE of a mean of per-row terms, sd(terms, ddof=1)/sqrt(n); RMSE = sqrt(mean of squared
    errors) takes the delta method, SE(MSE) / (2 RMSE)."""
    if len(y) < 2:
        return None
    if t.metric == "log_loss":
        terms = _log_loss_terms(y, p, t)
    elif t.metric == "brier":
        terms = (p - y) ** 2
    elif t.metric == "accuracy":
        terms = _hits(y, p, t)
    elif t.metric == "mae":
        terms = np.abs(p - y)
    else:  # rmse
        terms = (p - y) ** 2
        se_mse = float(np.std(terms, ddof=1) / math.sqrt(len(y)))
        return se_mse / (2.0 * value) if value > 0 else 0.0
    return float(np.std(terms, ddof=1) / math.sqrt(len(y)))


def _bootstrap_se(fn: Fn, y: np.ndarray, p: np.ndarray, t: TaskScoring) -> float | None:
    """The sd of the metric over BOOTSTRAP_RESAMPLES seeded resamples of the rows (a resample the metric is
    undefined on, e.g. one class only, is skipped); None with fewer than 2 usable resamples."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    n = len(y)
    values = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        idx = rng.integers(0, n, n)
        yy = y[idx]
        if t.task_type == "binary" and yy.min() == yy.max():
            continue
        if t.metric == "r2" and np.ptp(yy) == 0:
            continue
        values.append(fn(yy, p[idx], t))
    return float(np.std(values, ddof=1)) if len(values) >= 2 else None
