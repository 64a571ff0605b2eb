"""How precisely is one AUC measured on a holdout of a given size?"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray


def hanley_mcneil_se(auc: ArrayLike, n_positive: ArrayLike, n_negative: ArrayLike) -> NDArray[np.float64]:
    """How much would this AUC move on another holdout of the same size? Hanley & McNeil (1982) SE.

    SE^2 = (A(1-A) + (n1-1)(Q1-A^2) + (n2-1)(Q2-A^2)) / (n1 n2) with Q1 = A/(2-A), Q2 = 2A^2/(1+A);
    n1 positives, n2 negatives. Vectorised; returns an array (a 0-d array for scalar inputs).
    """
    a = np.asarray(auc, dtype=np.float64)
    n1 = np.asarray(n_positive, dtype=np.float64)
    n2 = np.asarray(n_negative, dtype=np.float64)
    if np.isnan(a).any() or ((a < 0) | (a > 1)).any():
        raise ValueError("auc must lie in [0, 1]")
    if (n1 < 1).any() or (n2 < 1).any() or not (np.isfinite(n1).all() and np.isfinite(n2).all()):
        raise ValueError("need at least one positive and one negative")
    q1 = a / (2.0 - a)
    q2 = 2.0 * a * a / (1.0 + a)
    var = (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n2 - 1) * (q2 - a * a)) / (n1 * n2)
    return np.sqrt(np.maximum(var, 0.0))


def auc_se(auc: float, n_positive: int, n_negative: int) -> float:
    """Scalar convenience form of `hanley_mcneil_se`."""
    value = float(hanley_mcneil_se(auc, n_positive, n_negative))
    if math.isnan(value):
        raise ValueError("SE is undefined for these inputs")
    return value
