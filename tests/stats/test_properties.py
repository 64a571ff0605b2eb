"""Properties that must hold for any input, checked with hypothesis."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.stats import best_of_k, pass_at_k, pass_hat_k, wilson_interval

scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_pass_at_k_bounds(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    at, hat = pass_at_k(n, c, k), pass_hat_k(n, c, k)
    assert 0.0 <= hat <= c / n + 1e-9  # all of k pass is no likelier than one pass
    assert c / n <= at + 1e-9 and at <= 1.0  # at least one of k is no less likely


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_estimate(xn: tuple[int, int]) -> None:
    x, n = xn
    low, high = wilson_interval(x, n)
    assert 0.0 <= low <= x / n <= high <= 1.0


@settings(max_examples=60)
@given(st.lists(st.tuples(scores, scores, st.booleans()), min_size=1, max_size=30), st.integers(1, 12))
def test_best_of_k_is_a_distribution_and_improves_with_k(attempts: list, k: int) -> None:
    e, h, c = (np.array(x) for x in zip(*attempts, strict=True))
    one, many = best_of_k(e, h, c, 1), best_of_k(e, h, c, k)
    if not c.any():
        assert many.p_none == 1.0
        return
    assert np.isclose(many.probabilities.sum(), 1.0) and (many.probabilities >= -1e-15).all()
    assert many.p_none <= one.p_none + 1e-15
    oracle_one, oracle_many = best_of_k(h, h, c, 1), best_of_k(h, h, c, k)
    assert oracle_many.mean >= oracle_one.mean - 1e-12  # choosing on the value itself never hurts
