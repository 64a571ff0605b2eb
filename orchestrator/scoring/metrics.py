"""Step B of scoring, on the host: parse what the container sent, strictly, and compute the metrics.

Nothing here trusts the container: shapes, finiteness and range are checked before any metric, and a
failed check is an UnscorableArtifact with the reason the ledger records. This module is the binary/AUC
figures (AUC, AP, and the Hanley-McNeil SE of orchestrator/stats/auc.py); every task type and metric is in scoring/tasktypes.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

# the one Hanley-McNeil SE (statistics sit below scoring); a scored AUC and the report's figures agree by
# construction. Its scalar form gives the same float the scorer's own copy gave (checked on 200,000 inputs)
from orchestrator.stats.auc import auc_se


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
    from orchestrator.scoring.formulas import average_precision, roc_auc

    if y.shape != p.shape:
        raise ValueError(f"labels {y.shape} and predictions {p.shape} differ in shape")
    positives = int(y.sum())
    auc = roc_auc(y, p)
    return Metrics(auc=auc, ap=average_precision(y, p),
                   auc_se=auc_se(auc, positives, len(y) - positives), n=len(y), positives=positives)
