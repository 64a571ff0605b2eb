import numpy as np
import pytest

from orchestrator.stats import auc_se, hanley_mcneil_se


def test_published_hanley_mcneil_se() -> None:
    assert round(auc_se(0.74, 500_000, 500_000), 5) == 0.00049


def test_hanley_mcneil_formula_by_hand() -> None:
    # A = 0.9, 50 positives, 50 negatives: Q1 = 0.9/1.1, Q2 = 1.62/1.9
    q1, q2 = 0.9 / 1.1, 1.62 / 1.9
    expected = np.sqrt((0.09 + 49 * (q1 - 0.81) + 49 * (q2 - 0.81)) / 2500)
    assert auc_se(0.9, 50, 50) == pytest.approx(expected, abs=1e-15)


def test_hanley_mcneil_small_sample_and_the_perfect_auc() -> None:
    # Hanley & McNeil (1982), table: A = 0.5, n1 = n2 = 10 -> SE about 0.13; a perfect AUC has no spread
    assert auc_se(0.5, 10, 10) == pytest.approx(0.1323, abs=1e-3)
    assert auc_se(1.0, 5, 5) == 0.0
    with pytest.raises(ValueError):
        auc_se(float("nan"), 5, 5)


def test_vectorised_and_bounded() -> None:
    se = hanley_mcneil_se([0.5, 0.74, 1.0], 1000, 1000)
    assert se.shape == (3,) and se[2] == 0.0 and se[0] > se[1]
    with pytest.raises(ValueError):
        auc_se(1.2, 10, 10)
    with pytest.raises(ValueError):
        auc_se(0.7, 0, 10)


def test_se_matches_the_spread_of_simulated_aucs() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    aucs = []
    for _ in range(300):
        neg = rng.exponential(1.0, 300)
        pos = rng.exponential(2.0, 300)  # exponential scores: the model Hanley-McNeil assume
        aucs.append(roc_auc_score(np.r_[np.zeros(300), np.ones(300)], np.r_[neg, pos]))
    assert np.std(aucs) == pytest.approx(auc_se(np.mean(aucs), 300, 300), rel=0.15)
