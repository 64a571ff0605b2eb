"""The first-half/second-half drift check, by hand."""

import numpy as np
import pytest

from orchestrator.stats import halves


def test_halves_split_by_order_not_by_input_position() -> None:
    order = np.array([5.0, 1.0, 3.0, 2.0, 4.0, np.nan, 6.0])
    values = np.array([0.9, 0.1, 0.2, 0.3, 0.8, 0.5, 0.7])
    out = halves(order, values, n_resamples=200, seed=0)
    assert (out.first_runs, out.second_runs, out.dropped) == (3, 3, 1)
    assert out.first_mean == pytest.approx(0.2) and out.second_mean == pytest.approx(0.8)
    assert out.difference.estimate == pytest.approx(0.6)
    perm = np.random.default_rng(1).permutation(7)
    assert halves(order[perm], values[perm], n_resamples=200, seed=0) == out
    with pytest.raises(ValueError, match="at least 4 runs"):
        halves([1, 2, 3], [1, 2, 3], seed=0)
