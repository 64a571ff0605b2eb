"""The scorer's metrics in numpy, as scikit-learn defines them (roc_auc_score, average_precision_score,
brier_score_loss, accuracy_score, f1_score(average="macro"), mean_squared_error, mean_absolute_error,
r2_score), for 1-D labels without sample weights: all the host's scoring asks of them.

Why not scikit-learn itself: importing `sklearn.metrics` costs every scoring process 3-5 s of CPU (it pulls
in most of scipy), paid again by each `sbx run`, study worker and fleet node. Each function follows
scikit-learn's own steps, so the floats are scikit-learn's: tests/scoring/test_formulas.py compares them with
`==` on random inputs with ties.
"""

from __future__ import annotations

import numpy as np


def _descending(y: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative true and false positives at each distinct score, highest first (scikit-learn's
    `confusion_matrix_at_thresholds`: a stable sort, one threshold per distinct value)."""
    order = np.argsort(p, kind="stable")[::-1]
    scores, labels = p[order], (y[order] == 1).astype(np.float64)
    thresholds = np.r_[np.flatnonzero(np.diff(scores)), len(labels) - 1]
    tps = np.cumsum(labels)[thresholds]
    fps = 1 + thresholds.astype(np.float64) - tps
    return tps, fps


def roc_auc(y: np.ndarray, p: np.ndarray) -> float:
    """The area under the ROC curve, by trapezoids under scikit-learn's curve (its corners only: collinear
    points dropped, as roc_curve's drop_intermediate does), so the float is scikit-learn's. NaN with one class."""
    positives = int((y == 1).sum())
    if positives == 0 or positives == len(y):
        return float("nan")
    tps, fps = _descending(y, p)
    if len(fps) > 2:
        corners = np.flatnonzero(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])
        tps, fps = tps[corners], fps[corners]
    tpr = np.r_[0.0, tps] / tps[-1]
    fpr = np.r_[0.0, fps] / fps[-1]
    return float(np.trapezoid(tpr, fpr))


def average_precision(y: np.ndarray, p: np.ndarray) -> float:
    """The step-wise average precision, sum of (R_k - R_{k-1}) P_k over the thresholds (no interpolation),
    summed in scikit-learn's order. 0 when there is no positive (scikit-learn warns, then gives 0 too)."""
    tps, fps = _descending(y, p)
    if tps[-1] == 0:
        return 0.0
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    precision = np.r_[precision[::-1], 1.0]
    recall = np.r_[recall[::-1], 0.0]
    return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


def brier(y: np.ndarray, p: np.ndarray) -> float:
    """Mean squared difference between the probability of the positive class and the 0/1 label, computed as
    scikit-learn does (both columns of the one-hot labels, halved), so the float is scikit-learn's."""
    labels = np.column_stack([1.0 - (y == 1), (y == 1)]).astype(np.float64)
    probabilities = np.column_stack([1 - p, p])
    return float(np.mean(np.sum((labels - probabilities) ** 2, axis=1)) * 0.5)


def accuracy(y: np.ndarray, guess: np.ndarray) -> float:
    return float(np.mean(y == guess))


def macro_f1(y: np.ndarray, guess: np.ndarray, classes: int) -> float:
    """The mean over all `classes` of each class's F1 from the confusion counts; a class neither present nor
    predicted scores 0 (scikit-learn's zero_division=0)."""
    confusion = np.bincount(y.astype(int) * classes + guess, minlength=classes * classes).reshape(classes, classes)
    tp = np.diag(confusion).astype(float)
    denominator = confusion.sum(axis=0) + confusion.sum(axis=1)
    f1 = np.divide(2 * tp, denominator, out=np.zeros(classes), where=denominator > 0)
    return float(f1.mean())


def mean_squared_error(y: np.ndarray, p: np.ndarray) -> float:
    return float(np.mean((y - p) ** 2))


def mean_absolute_error(y: np.ndarray, p: np.ndarray) -> float:
    return float(np.mean(np.abs(p - y)))


def r2(y: np.ndarray, p: np.ndarray) -> float:
    """1 - residual / total sum of squares; a constant `y` gives 1.0 when predicted exactly, else 0.0
    (scikit-learn's force_finite)."""
    residual = float(((y - p) ** 2).sum())
    total = float(((y - np.mean(y)) ** 2).sum())
    if total == 0.0:
        return 1.0 if residual == 0.0 else 0.0
    return 1.0 - residual / total


__all__ = ["accuracy", "average_precision", "brier", "macro_f1", "mean_absolute_error", "mean_squared_error", "r2",
           "roc_auc"]
