"""Does where or when a run ran (node, slot, run order, start time) explain any of a pairing's spread?"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from orchestrator.stats._checks import Seed, float_array, rng_from, same_length
from orchestrator.stats.anova import GroupShare, group_share
from orchestrator.stats.correlation import RankCorrelation, rank_correlation


@dataclass(frozen=True)
class PlacementCheck:
    """One pairing's scores against node, slot, run order and start time; a check that could not run says why."""

    pairing: str
    runs: int
    dropped: int
    node: GroupShare | None
    slot: GroupShare | None
    run_order: RankCorrelation | None
    start_time: RankCorrelation | None
    #: check name -> why it was not computed (one node only, constant scores, column not given, ...)
    skipped: dict[str, str]


def _column(values: ArrayLike | None, n: int, name: str) -> np.ndarray | None:
    if values is None:
        return None
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(
            f"{name} must be one-dimensional with one value per run ({n}), got shape {arr.shape}"
        )
    return arr


def _centre_by_task(values: np.ndarray, rows: np.ndarray, tasks: np.ndarray) -> None:
    """Subtract from values[rows] their task's mean, in place: one sort, not one pass over the runs per task.

    Each task's rows are taken in ascending order (a stable sort of ascending rows), the order a boolean
    mask gives them, so each mean is summed exactly as `values[mask].mean()` sums it: the same figures."""
    if rows.size == 0:
        return
    _, inverse = np.unique(tasks[rows], return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[order])) + 1
    for members in np.split(rows[order], bounds):
        values[members] -= values[members].mean()


def placement_checks(
    pairings: ArrayLike,
    scores: ArrayLike,
    *,
    nodes: ArrayLike | None = None,
    slots: ArrayLike | None = None,
    run_order: ArrayLike | None = None,
    started_at: ArrayLike | None = None,
    tasks: ArrayLike | None = None,
    n_resamples: int = 10_000,
    seed: Seed,
) -> tuple[PlacementCheck, ...]:
    """Per pairing, does where or when a run ran explain any of the spread of its scores (or passes)?

    Node and slot: one-way ANOVA F with a permutation p-value and the between-group share of variance
    (`anova.group_share`). Run order and start time: Spearman's rho with a permutation p-value
    (`correlation.rank_correlation`). Scores may be 0/1 outcomes (then it is the pass rate that is
    explained). With `tasks`, each score is first centred on its task's mean within the pairing, so that
    task difficulty cannot pass for a node, slot or time effect when tasks were not spread evenly over
    nodes or were run in sequence (the permutation then shuffles the centred scores, an approximation
    to shuffling within tasks). Runs missing a score are dropped and counted; runs missing a node or slot
    are left out of that check only. Pairings are returned sorted by name; each check draws from its
    own child generator.
    """
    score_arr = float_array(scores, "scores")
    pairing_arr = np.asarray(pairings, dtype=object)
    if pairing_arr.ndim != 1:
        raise ValueError("pairings must be one-dimensional")
    n = same_length(pairings=pairing_arr, scores=score_arr)
    columns = {
        "node": _column(nodes, n, "nodes"),
        "slot": _column(slots, n, "slots"),
        "run_order": _column(run_order, n, "run_order"),
        "start_time": _column(started_at, n, "started_at"),
    }
    task_arr = _column(tasks, n, "tasks")
    task_str = task_arr.astype(str) if task_arr is not None else None
    pairing_str = pairing_arr.astype(str)  # once: comparing object arrays per pairing is what costs
    names = sorted({str(p) for p in pairing_arr})
    children = rng_from(seed).spawn(len(names) * len(columns))
    out = []
    for i, name in enumerate(names):
        in_pairing = pairing_str == name
        scored = in_pairing & ~np.isnan(score_arr)
        values = score_arr.copy()
        if task_str is not None:
            _centre_by_task(values, np.flatnonzero(scored), task_str)
        shares: dict[str, GroupShare] = {}  # node and slot
        correlations: dict[str, RankCorrelation] = {}  # run order and start time
        skipped: dict[str, str] = {}
        for j, (check, column) in enumerate(columns.items()):
            rng = children[i * len(columns) + j]
            if column is None:
                skipped[check] = "not given"
                continue
            try:
                if check in ("node", "slot"):
                    shares[check] = group_share(
                        column[scored], values[scored], n_resamples=n_resamples, seed=rng
                    )
                else:
                    x = np.array([np.nan if v is None else float(v) for v in column[scored]])
                    correlations[check] = rank_correlation(x, values[scored], n_resamples=n_resamples, seed=rng)
            except ValueError as exc:
                skipped[check] = str(exc)
        out.append(
            PlacementCheck(
                pairing=name,
                runs=int(scored.sum()),
                dropped=int((in_pairing & ~scored).sum()),
                node=shares.get("node"),
                slot=shares.get("slot"),
                run_order=correlations.get("run_order"),
                start_time=correlations.get("start_time"),
                skipped=skipped,
            )
        )
    return tuple(out)
