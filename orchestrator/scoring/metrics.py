"""Step B of scoring, on the host: parse what the container sent, strictly, and compute the metrics.

Nothing here trusts the container: shapes, finiteness and range are checked before any metric, and a
failed check is an UnscorableArtifact with the reason the ledger records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from orchestrator.failures import DataError, UnscorableArtifact


def hanley_mcneil_se(auc: float, n_pos: int, n_neg: int) -> float:
    """How precisely is an AUC known from n_pos positives and n_neg negatives?
    Standard error of the AUC by Hanley & McNeil (1982), eq. 2, with Q1 = A/(2-A), Q2 = 2A²/(1+A)."""
    if not 0.0 <= auc <= 1.0 or math.isnan(auc):
        raise ValueError(f"need 0 <= auc <= 1, got {auc}")
    if n_pos < 1 or n_neg < 1:
        raise ValueError(f"need at least one of each class, got n_pos={n_pos} n_neg={n_neg}")
    q1 = auc / (2.0 - auc)
    q2 = 2.0 * auc * auc / (1.0 + auc)
    var = (auc * (1.0 - auc) + (n_pos - 1) * (q1 - auc * auc) + (n_neg - 1) * (q2 - auc * auc)) / (n_pos * n_neg)
    return math.sqrt(max(var, 0.0))


@dataclass(frozen=True)
class Metrics:
    auc: float
    ap: float
    auc_se: float
    n: int
    positives: int


def read_labels(path: Path, target: str, positive: str = "Y", negative: str = "N") -> np.ndarray:
    """The holdout's labels as 0/1, from a one-column CSV; anything else is a DataError (our data, not theirs)."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read the labels ({exc})") from None
    if list(frame.columns) != [target]:
        raise DataError(f"{path}: expected exactly one column {target!r}, found {list(frame.columns)}")
    values = frame[target].to_numpy()
    bad = ~np.isin(values, [positive, negative])
    if bad.any():
        raise DataError(f"{path}: {int(bad.sum())} labels are neither {positive!r} nor {negative!r}")
    y = (values == positive).astype(np.int8)
    if y.min() == y.max():
        raise DataError(f"{path}: all {len(y)} labels are the same class; an AUC needs both")
    return y


def check_predictions(shape: tuple[int, ...], values: np.ndarray, rows: int) -> np.ndarray:
    """The values of one batch if they are `rows` finite probabilities; else UnscorableArtifact."""
    if shape != (rows,):
        raise UnscorableArtifact("wrong_shape", f"predict_proba returned shape {shape} for a batch of {rows} rows, "
                                               f"expected ({rows},)")
    finite = np.isfinite(values)
    if not finite.all():
        nan = int(np.isnan(values).sum())
        raise UnscorableArtifact("not_finite", f"{int((~finite).sum())} of {rows} predictions are not finite "
                                              f"({nan} NaN) in a batch of {rows} rows")
    outside = (values < 0.0) | (values > 1.0)
    if outside.any():
        raise UnscorableArtifact("out_of_range", f"{int(outside.sum())} of {rows} predictions lie outside [0, 1] "
                                                f"(min {values.min():.6g}, max {values.max():.6g})")
    return values


def compute_metrics(y: np.ndarray, p: np.ndarray) -> Metrics:
    """AUC, average precision and the AUC's Hanley-McNeil standard error of predictions p for labels y."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    if y.shape != p.shape:
        raise ValueError(f"labels {y.shape} and predictions {p.shape} differ in shape")
    positives = int(y.sum())
    auc = float(roc_auc_score(y, p))
    return Metrics(auc=auc, ap=float(average_precision_score(y, p)),
                   auc_se=hanley_mcneil_se(auc, positives, len(y) - positives), n=len(y), positives=positives)
