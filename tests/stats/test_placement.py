import numpy as np
import pytest
from scipy import stats as sps

from orchestrator.stats import group_share, placement_checks


def _runs(seed: int = 0) -> dict[str, np.ndarray]:
    """Two pairings of 48 runs on 4 nodes x 3 slots; pairing 'a' is slower on node n3 and drifts over time."""
    rng = np.random.default_rng(seed)
    n = 48
    pairing = np.array(["a"] * n + ["b"] * n, dtype=object)
    node = np.tile(np.repeat(["n0", "n1", "n2", "n3"], 3), 8)
    slot = np.tile(["s0", "s1", "s2"], 32)
    order = np.tile(np.arange(n), 2).astype(float)
    started = 1.7e9 + order * 600 + rng.uniform(0, 60, 2 * n)
    score = rng.normal(0.74, 0.01, 2 * n)
    a = pairing == "a"
    score[a & (node == "n3")] -= 0.03
    score[a] += 0.0006 * order[a]
    return {
        "pairing": pairing,
        "node": node,
        "slot": slot,
        "order": order,
        "started": started,
        "score": score,
    }


def test_placement_finds_the_node_and_the_drift_where_they_are() -> None:
    r = _runs()
    out = placement_checks(
        r["pairing"],
        r["score"],
        nodes=r["node"],
        slots=r["slot"],
        run_order=r["order"],
        started_at=r["started"],
        n_resamples=4000,
        seed=1,
    )
    a, b = out
    assert (a.pairing, b.pairing) == ("a", "b") and a.runs == b.runs == 48 and not a.skipped
    assert a.node is not None and a.node.p_value < 0.01 and a.node.share > 0.3
    assert a.run_order is not None and a.run_order.p_value < 0.01 and a.run_order.rho > 0.3
    assert a.start_time is not None and a.start_time.rho > 0.3
    assert b.node is not None and b.node.p_value > 0.01
    assert b.slot is not None and b.slot.p_value > 0.01
    # each check is the library statistic on that pairing's runs
    in_a = r["pairing"] == "a"
    ref = sps.f_oneway(*[r["score"][in_a & (r["node"] == g)] for g in ("n0", "n1", "n2", "n3")])
    assert a.node.f == pytest.approx(ref.statistic)
    assert a.run_order.rho == pytest.approx(sps.spearmanr(r["order"][in_a], r["score"][in_a]).statistic)
    assert a.slot is not None
    assert a.slot.share == pytest.approx(
        group_share(r["slot"][in_a], r["score"][in_a], n_resamples=10, seed=0).share
    )


def test_placement_skips_what_it_cannot_compute_and_says_why() -> None:
    r = _runs()
    single_node = np.full(96, "n0")
    score = r["score"].copy()
    score[:2] = np.nan
    (a, _) = placement_checks(r["pairing"], score, nodes=single_node, n_resamples=200, seed=2)
    assert a.node is None and "at least 2 groups" in a.skipped["node"]
    assert a.skipped["slot"] == "not given" and a.run_order is None
    assert a.runs == 46 and a.dropped == 2
    passes = (r["score"] > 0.74).astype(float)
    (a, _) = placement_checks(r["pairing"], passes, slots=r["slot"], n_resamples=200, seed=2)
    assert a.slot is not None  # pass/fail outcomes work too: the pass rate is what is explained


def test_task_difficulty_run_in_sequence_is_not_taken_for_drift() -> None:
    # 12 tasks of very different difficulty run one after another, 4 runs each, no time effect at all
    rng = np.random.default_rng(3)
    tasks = np.repeat([f"t{i}" for i in range(12)], 4)
    difficulty = np.repeat(np.sort(rng.uniform(0.1, 0.9, 12)), 4)  # easier tasks happen to come later
    score = difficulty + rng.normal(0, 0.05, 48)
    order = np.arange(48.0)
    pairing = np.full(48, "p")
    (naive,) = placement_checks(pairing, score, run_order=order, n_resamples=4000, seed=4)
    (centred,) = placement_checks(pairing, score, run_order=order, tasks=tasks, n_resamples=4000, seed=4)
    assert naive.run_order is not None and naive.run_order.p_value < 0.001
    assert centred.run_order is not None and centred.run_order.p_value > 0.05
    # a real drift is still found after centring when each task's runs are spread over the study (a
    # drift confined to tasks run back to back cannot be told apart from the tasks)
    spread_tasks = np.tile([f"t{i}" for i in range(12)], 4)  # run order: t0..t11, then again, 4 times
    spread_score = np.tile(np.sort(rng.uniform(0.1, 0.9, 12)), 4) + rng.normal(0, 0.05, 48) + 0.004 * order
    (found,) = placement_checks(
        pairing, spread_score, run_order=order, tasks=spread_tasks, n_resamples=4000, seed=4
    )
    assert found.run_order is not None and found.run_order.p_value < 0.01
