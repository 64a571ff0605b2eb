"""Step B of scoring, on the host: parse what the container sent, strictly, and compute the metrics.

Nothing here trusts the container: shapes, finiteness and range are checked before any metric, and a
failed check is an UnscorableArtifact with the reason the ledger records. This module is the binary/AUC
figures (AUC, AP, Hanley-McNeil SE); every task type and metric is in scoring/tasktypes.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np


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
    """A binary holdout's labels as 0/1, from a one-column CSV; anything else is a DataError (our data, not
    theirs). Other task types: TaskScoring.read_labels (scoring/tasktypes.py), which this calls."""
    from orchestrator.scoring.tasktypes import TaskScoring

    return TaskScoring(target=target, positive=positive, negative=negative).read_labels(path)


def check_predictions(shape: tuple[int, ...], values: np.ndarray, rows: int) -> np.ndarray:
    """The values of one batch if they are `rows` finite probabilities; else UnscorableArtifact (the binary
    case of TaskScoring.check, scoring/tasktypes.py)."""
    from orchestrator.scoring.tasktypes import TaskScoring

    return TaskScoring().check(shape, values, rows)


def compute_metrics(y: np.ndarray, p: np.ndarray) -> Metrics:
    """AUC, average precision and the AUC's Hanley-McNeil standard error of predictions p for labels y."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    if y.shape != p.shape:
        raise ValueError(f"labels {y.shape} and predictions {p.shape} differ in shape")
    positives = int(y.sum())
    auc = float(roc_auc_score(y, p))
    return Metrics(auc=auc, ap=float(average_precision_score(y, p)),
                   auc_se=hanley_mcneil_se(auc, positives, len(y) - positives), n=len(y), positives=positives)
