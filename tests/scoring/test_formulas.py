"""The scorer's numpy metrics are scikit-learn's figures, float for float, and scoring never imports it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sklearn import metrics

from orchestrator.scoring import formulas


def _scores(rng: np.random.Generator, n: int, shape: int) -> np.ndarray:
    """Continuous scores, coarse ones with many ties, float32-rounded ones, and a heavy tie at one value."""
    if shape == 0:
        return rng.random(n)
    if shape == 1:
        return np.round(rng.random(n), 1)
    if shape == 2:
        return rng.random(n).astype(np.float32).astype(np.float64)
    return np.where(rng.random(n) < 0.5, 0.3, rng.random(n))


def test_the_binary_metrics_are_scikit_learns_to_the_last_bit() -> None:
    rng = np.random.default_rng(7)
    for case in range(800):
        n = int(rng.integers(2, 500))
        y = rng.integers(0, 2, n)
        y[0], y[1] = 0, 1
        p = _scores(rng, n, case % 4)
        assert formulas.roc_auc(y, p) == metrics.roc_auc_score(y, p), case
        assert formulas.average_precision(y, p) == metrics.average_precision_score(y, p), case
        assert formulas.brier(y, p) == metrics.brier_score_loss(y, p), case
        guess = (p >= 0.5).astype(int)
        assert formulas.accuracy(y, guess) == metrics.accuracy_score(y, guess), case


def test_the_multiclass_and_regression_metrics_are_scikit_learns() -> None:
    rng = np.random.default_rng(11)
    for case in range(400):
        n, k = int(rng.integers(2, 400)), int(rng.integers(2, 7))
        y, guess = rng.integers(0, k, n), rng.integers(0, k - 1, n)  # one class never predicted
        assert formulas.macro_f1(y, guess, k) == metrics.f1_score(y, guess, labels=list(range(k)), average="macro",
                                                                  zero_division=0), case
        truth = rng.normal(size=n)
        pred = truth + rng.normal(size=n)
        assert formulas.mean_squared_error(truth, pred) == metrics.mean_squared_error(truth, pred), case
        assert formulas.mean_absolute_error(truth, pred) == metrics.mean_absolute_error(truth, pred), case
        assert formulas.r2(truth, pred) == metrics.r2_score(truth, pred), case


def test_edge_cases_follow_scikit_learn() -> None:
    constant = np.ones(5)
    assert formulas.r2(constant, constant) == metrics.r2_score(constant, constant) == 1.0
    assert formulas.r2(constant, np.zeros(5)) == metrics.r2_score(constant, np.zeros(5)) == 0.0
    assert np.isnan(formulas.roc_auc(np.ones(4, dtype=int), np.random.default_rng(0).random(4)))  # one class
    assert formulas.roc_auc(np.array([0, 1]), np.array([0.5, 0.5])) == 0.5
    assert formulas.average_precision(np.zeros(4, dtype=int), np.arange(4.0)) == 0.0
    with pytest.warns(UserWarning):  # scikit-learn warns about the missing positive, then gives the same 0
        assert metrics.average_precision_score(np.zeros(4, dtype=int), np.arange(4.0)) == 0.0


def test_scoring_on_the_host_never_imports_scikit_learn_or_scipy() -> None:
    code = ("import sys, numpy as np\n"
            "from orchestrator.scoring.tasktypes import TaskScoring\n"
            "from orchestrator.scoring.metrics import compute_metrics\n"
            "y = np.array([0, 1, 0, 1, 1]); p = np.array([.1, .8, .4, .35, .9])\n"
            "TaskScoring().score(y, p); compute_metrics(y, p)\n"
            "for metric in ('ap', 'brier', 'accuracy', 'log_loss'):\n"
            "    TaskScoring(metric=metric).score(y, p)\n"
            "import orchestrator.scoring.service\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'scipy'}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
