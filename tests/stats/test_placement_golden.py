"""placement_checks with tasks gives, to the last bit, the figures recorded before its task centring was
made one sort instead of one pass per task (`placement_golden.json`, same inputs, same seeds)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from orchestrator.stats import placement_checks

GOLDEN = json.loads((Path(__file__).parent / "data" / "placement_golden.json").read_text())


def _runs(seed: int, n: int, tasks: int, pairings: list[str]) -> dict[str, Any]:
    # the recording script's inputs: tasks of different difficulty, a few missing scores and nodes
    rng = np.random.default_rng(seed)
    pairing = rng.choice(pairings, size=n).astype(object)
    task = rng.choice([f"t{i}" for i in range(tasks)], size=n).astype(object)
    node = rng.choice(["n0", "n1", "n2", "n3"], size=n).astype(object)
    slot = rng.integers(0, 3, size=n).astype(object)
    order = np.arange(n, dtype=float)
    started = 1.7e9 + order * 60 + rng.uniform(0, 30, n)
    score = rng.normal(0.74, 0.01, n) + np.array([int(t[1:]) for t in task]) * 0.002
    score[rng.random(n) < 0.05] = np.nan
    node[rng.random(n) < 0.05] = None
    return {"pairings": pairing, "scores": score, "nodes": node, "slots": slot, "run_order": order,
            "started_at": started, "tasks": task}


def _exact(got: Any, want: Any, where: str = "") -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for k in want:
            _exact(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, float):
        assert (math.isnan(got) and math.isnan(want)) or float(got).hex() == want.hex(), (where, got, want)
    else:
        assert got == want, (where, got, want)


@pytest.mark.parametrize("key", list(GOLDEN))
def test_placement_with_tasks_matches_the_recorded_figures(key: str) -> None:
    seed, n, tasks, pairings = map(int, key.split("-"))
    checks = placement_checks(**_runs(seed, n, tasks, ["a", "b", "c"][:pairings]), n_resamples=500, seed=seed)
    got = [dataclasses.asdict(c) for c in checks]
    assert len(got) == len(GOLDEN[key])
    for g, w in zip(got, GOLDEN[key], strict=True):
        _exact(g, w, g["pairing"])
