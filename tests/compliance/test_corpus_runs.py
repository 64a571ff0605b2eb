"""The corpus is real code: every variant trains on synthetic flight data and answers predict_proba. And the
frame_statistics labels are checked the way the scorer would: a row's prediction must not change when the
row is scored in a different batch -- it does for every variant labelled frame_statistics, and for no other.
"""

from __future__ import annotations

import os
import runpy
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sklearn  # noqa: F401 - loaded before the thread limit so its OpenMP runtime is limited too
import xgboost  # loaded before the thread limit too
from threadpoolctl import threadpool_limits

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(CORPUS.rglob("*.py"))
LABEL = "dep_delayed_15min"
#: variants whose batch independence relies on the model re-coding categories by value (xgboost >= 3.1)
NEEDS_RECODING = {"c25_astype_category_recoded.py"}


def _xgboost_recodes_categories() -> bool:
    major, minor = (int(p) for p in xgboost.__version__.split(".")[:2])
    return (major, minor) >= (3, 1)


def synthetic_flights(n: int, seed: int) -> pd.DataFrame:
    """Flights in the task's layout, with a label that depends on the features (so models learn something),
    few enough airports and days that batches repeat keys and miss some levels."""
    rng = np.random.default_rng(seed)
    airports = np.array(["ATL", "ORD", "DFW", "DEN", "LAX", "SFO", "JFK", "BOS"])
    carriers = np.array(["AA", "DL", "UA", "WN", "B6"])
    dep_hour = rng.integers(5, 23, n)
    frame = pd.DataFrame(
        {
            "Month": [f"c-{m}" for m in rng.integers(1, 4, n)],
            "DayofMonth": [f"c-{d}" for d in rng.integers(1, 8, n)],
            "DayOfWeek": [f"c-{d}" for d in rng.integers(1, 8, n)],
            "DepTime": dep_hour * 100 + rng.integers(0, 60, n),
            "UniqueCarrier": rng.choice(carriers, n),
            "Origin": rng.choice(airports, n),
            "Dest": rng.choice(airports, n),
            "Distance": rng.integers(100, 2800, n),
        }
    )
    logit = (
        -2.0
        + 0.15 * (dep_hour - 12)
        + 0.8 * (frame["UniqueCarrier"] == "WN")
        + 0.5 * (frame["Origin"] == "ORD")
    )
    late = rng.random(n) < 1 / (1 + np.exp(-logit))
    frame[LABEL] = np.where(late, "Y", "N")
    return frame


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("task")
    (root / "data").mkdir()
    synthetic_flights(1500, seed=1).to_csv(root / "data" / "train.csv", index=False)
    synthetic_flights(500, seed=2).to_csv(root / "data" / "eval.csv", index=False)
    return root


@pytest.fixture
def in_workdir(workdir: Path) -> Iterator[Path]:
    before = Path.cwd()
    os.chdir(workdir)
    try:
        yield workdir
    finally:
        os.chdir(before)


def _expected(path: Path) -> set[str]:
    first = path.read_text().splitlines()[0].removeprefix("# expect:")
    return {s.strip() for s in first.split(",")} - {"clear"}


def _predict_in_batches(predict, holdout: pd.DataFrame, batch: int, seed: int) -> np.ndarray:
    order = np.random.default_rng(seed).permutation(len(holdout))
    out = np.empty(len(holdout))
    for start in range(0, len(holdout), batch):
        idx = order[start : start + batch]
        out[idx] = np.asarray(predict(holdout.iloc[idx].reset_index(drop=True)), dtype=float).ravel()
    return out


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPUS)) for p in FILES])
def test_variant_runs_and_batch_dependence_matches_label(path: Path, in_workdir: Path) -> None:
    if path.name in NEEDS_RECODING and not _xgboost_recodes_categories():
        pytest.skip("needs xgboost >= 3.1, which matches categories by value at prediction time")
    script = in_workdir / "train.py"
    script.write_text(path.read_text())
    holdout = synthetic_flights(300, seed=3).drop(columns=[LABEL])
    # one thread per model: small data, and a shared test machine, train faster without thread contention
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter(
            "ignore"
        )  # library deprecation chatter inside agent-style code is not the point
        module = runpy.run_path(str(script), run_name="train")
        predict = module["predict_proba"]
        whole = np.asarray(predict(holdout.copy()), dtype=float).ravel()
        shuffled = _predict_in_batches(predict, holdout, batch=41, seed=4)
    assert whole.shape == (len(holdout),)
    assert np.isfinite(whole).all() and ((whole >= 0) & (whole <= 1)).all()
    changed = np.abs(whole - shuffled).max()
    if "frame_statistics" in _expected(path):
        assert changed > 1e-6, "labelled frame_statistics, but predictions do not depend on the batch"
    else:
        assert changed <= 1e-6, f"predictions depend on the batch (max change {changed:.3g})"
