import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from orchestrator.stats import holm_adjust, interaction_contrasts, wald_test


@pytest.mark.parametrize("seed", range(5))
def test_holm_matches_statsmodels(seed: int) -> None:
    p = np.random.default_rng(seed).uniform(0, 0.2, size=7)
    assert holm_adjust(p) == pytest.approx(multipletests(p, method="holm")[1], abs=1e-12)


def test_contrasts_of_a_two_by_three_grid() -> None:
    rng = np.random.default_rng(0)
    truth = {
        ("a1", "m1"): 0.70,
        ("a1", "m2"): 0.72,
        ("a1", "m3"): 0.74,
        ("a2", "m1"): 0.71,
        ("a2", "m2"): 0.73,
        ("a2", "m3"): 0.70,
    }
    cells = {key: mu + rng.normal(0, 0.01, size=40) for key, mu in truth.items()}
    out = interaction_contrasts(cells, n_resamples=4000, seed=1)
    assert (out.reference_row, out.reference_col) == ("a1", "m1")
    assert [(c.row, c.col) for c in out.contrasts] == [("a2", "m2"), ("a2", "m3")]
    m = {k: v.mean() for k, v in cells.items()}
    c2 = out.contrasts[0]
    assert c2.estimate == pytest.approx((m["a2", "m2"] - m["a2", "m1"]) - (m["a1", "m2"] - m["a1", "m1"]))
    se = np.sqrt(
        sum(cells[k].var(ddof=1) / 40 for k in [("a2", "m2"), ("a2", "m1"), ("a1", "m2"), ("a1", "m1")])
    )
    assert c2.se == pytest.approx(se)
    assert c2.low < c2.estimate < c2.high
    assert (c2.high - c2.low) == pytest.approx(2 * 1.96 * c2.se, rel=0.1)
    assert out.wald.df == 2 and out.wald.p_value < 1e-6  # (a2, m3) is a real interaction
    assert out.contrasts[1].p_holm == pytest.approx(min(1, 2 * min(c.p_value for c in out.contrasts)))


def test_wald_test_with_identity_covariance_is_sum_of_squares() -> None:
    out = wald_test([1.0, 2.0], np.eye(2))
    assert out.statistic == pytest.approx(5.0) and out.df == 2
    with pytest.raises(ValueError, match="singular"):
        wald_test([1.0, 1.0], np.zeros((2, 2)))


def test_incomplete_grid_is_rejected() -> None:
    cells = {("a", "x"): [1.0, 2.0], ("a", "y"): [1.0, 2.0], ("b", "x"): [1.0, 2.0]}
    with pytest.raises(ValueError, match="incomplete"):
        interaction_contrasts(cells, seed=0)


def test_pairwise_contrasts_by_hand_one_holm_family_and_an_invariant_wald() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(8)
    cells = {(a, m): rng.normal(0.74 + 0.004 * i * j, 0.01, 40) for i, a in enumerate(("pi", "hermes", "oc"))
             for j, m in enumerate(("flash", "big"))}
    res = interaction_contrasts(cells, n_resamples=500, seed=0, rows=["pi", "hermes", "oc"],
                                cols=["flash", "big"], pairwise=True)
    mean = {k: v.mean() for k, v in cells.items()}
    var = {k: v.var(ddof=1) / v.size for k, v in cells.items()}
    pairs = [(c.row, c.against) for c in res.contrasts]
    assert pairs == [("pi", "hermes"), ("pi", "oc"), ("hermes", "oc")]
    for c in res.contrasts:
        est = (mean[(c.row, "big")] - mean[(c.row, "flash")]) - (mean[(c.against, "big")] - mean[(c.against, "flash")])
        se = np.sqrt(sum(var[(r, m)] for r in (c.row, c.against) for m in ("flash", "big")))
        assert c.estimate == pytest.approx(est) and c.se == pytest.approx(se)
    holm = multipletests([c.p_value for c in res.contrasts], method="holm")[1]
    assert [c.p_holm for c in res.contrasts] == pytest.approx(holm)
    against_first = interaction_contrasts(cells, n_resamples=500, seed=0)  # default: sorted, against the first
    assert [c.against for c in against_first.contrasts] == ["hermes"] * 2
    assert against_first.wald.statistic == pytest.approx(res.wald.statistic) and res.wald.df == 2
    shuffled = {k: cells[k] for k in reversed(list(cells))}
    assert interaction_contrasts(shuffled, n_resamples=500, seed=0) == against_first
