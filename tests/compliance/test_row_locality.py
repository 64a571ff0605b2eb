"""`frame_statistics` by row locality: small programs for each semantic case of issue 14.

A prediction for a row may depend on that row and on state fitted on training data, never on other rows of
the frame being scored. Each case is a minimal train.py fragment and whether it breaks the rule.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from orchestrator.compliance.audit import audit_source

F = "frame_statistics"
HEAD = """
import os
import numpy as np
import pandas as pd
from scipy.stats import rankdata
from xgboost import XGBClassifier
TARGET = "dep_delayed_15min"
train = pd.read_csv("data/train.csv")
FEATURES = ["Month", "DayofMonth", "DayOfWeek", "DepTime", "Distance"]
models = [XGBClassifier(random_state=s).fit(train[FEATURES], train[TARGET]) for s in range(3)]
model = models[0]
TABLE = train.groupby("Origin")["Distance"].mean()
COUNTS = train["Origin"].value_counts()
"""

CASES: dict[str, tuple[str, bool]] = {
    # --- reductions with their axis: members of a list versus rows of the batch -----------------------
    "ensemble mean over the members' axis": (
        """
        def predict_proba(df):
            X = df[FEATURES]
            return np.mean([m.predict_proba(X)[:, 1] for m in models], axis=0)
    """,
        False,
    ),
    "ensemble mean of members appended in a loop": (
        """
        def predict_proba(df):
            preds = []
            for m in models:
                preds.append(m.predict_proba(df[FEATURES])[:, 1] * 0.5)
            return np.median(preds, axis=0)
    """,
        False,
    ),
    "a mean over every element of the members' predictions": (
        """
        def predict_proba(df):
            preds = [m.predict_proba(df[FEATURES])[:, 1] for m in models]
            return np.full(len(df), np.mean(preds))
    """,
        True,
    ),
    "a mean over axis 1 of a list of members runs down the rows": (
        """
        def predict_proba(df):
            preds = [m.predict_proba(df[FEATURES])[:, 1] for m in models]
            centre = np.mean(preds, axis=1)
            return preds[0] - centre[0]
    """,
        True,
    ),
    "members stacked as rows, averaged over axis 0": (
        """
        def predict_proba(df):
            return np.vstack([m.predict_proba(df[FEATURES])[:, 1] for m in models]).mean(axis=0)
    """,
        False,
    ),
    "members stacked as columns, averaged over axis 1": (
        """
        def predict_proba(df):
            P = np.column_stack([m.predict_proba(df[FEATURES])[:, 1] for m in models])
            return np.average(P, axis=1, weights=[0.5, 0.3, 0.2])
    """,
        False,
    ),
    "members stacked as columns, averaged over axis 0 (across rows)": (
        """
        def predict_proba(df):
            P = np.column_stack([m.predict_proba(df[FEATURES])[:, 1] for m in models])
            return P[:, 0] - P.mean(axis=0)[0]
    """,
        True,
    ),
    "np.stack along the last axis, averaged over it": (
        """
        def predict_proba(df):
            P = np.stack([m.predict_proba(df[FEATURES])[:, 1] for m in models], axis=-1)
            return P.mean(axis=-1)
    """,
        False,
    ),
    "builtin sum of the members divided by their number": (
        """
        def predict_proba(df):
            preds = [m.predict_proba(df[FEATURES])[:, 1] for m in models]
            return sum(preds) / len(preds)
    """,
        False,
    ),
    "a frame of member predictions: its rows are the members": (
        """
        def predict_proba(df):
            frame = pd.DataFrame([m.predict_proba(df[FEATURES])[:, 1] for m in models])
            return frame.mean().to_numpy()
    """,
        False,
    ),
    "a frame of member predictions averaged across its columns (the batch's rows)": (
        """
        def predict_proba(df):
            frame = pd.DataFrame([m.predict_proba(df[FEATURES])[:, 1] for m in models])
            scale = frame.mean(axis=1).to_numpy()
            return frame.to_numpy()[0] / scale[0]
    """,
        True,
    ),
    "an axis that is not known is taken to include the rows": (
        """
        AXIS = int(os.environ["AXIS"])
        def predict_proba(df):
            preds = [m.predict_proba(df[FEATURES])[:, 1] for m in models]
            return np.mean(preds, axis=AXIS)
    """,
        True,
    ),
    "rank averaging ranks each member's predictions over the batch": (
        """
        def predict_proba(df):
            return np.mean([rankdata(m.predict_proba(df[FEATURES])[:, 1]) for m in models], axis=0)
    """,
        True,
    ),
    # --- loops over lists of columns are not loops over rows ----------------------------------------
    "a literal list of (name, column, period) builds cyclic features": (
        """
        def predict_proba(df):
            X = df[FEATURES].copy()
            hour = df["DepTime"] // 100
            for name, col, period in [("hour", hour, 24), ("month", df["Month"], 12)]:
                X[name + "_sin"] = np.sin(2 * np.pi * col / period)
                X[name + "_cos"] = np.cos(2 * np.pi * col / period)
            return model.predict_proba(X)[:, 1]
    """,
        False,
    ),
    "a dict of batch columns looked up in training tables": (
        """
        def predict_proba(df):
            X = df[FEATURES].copy()
            keys = {"origin": df["Origin"], "dest": df["Dest"]}
            for name, vals in keys.items():
                X[name + "_n"] = vals.map(COUNTS).fillna(0)
            return model.predict_proba(X)[:, 1]
    """,
        False,
    ),
    "a loop over the batch's rows that counts values": (
        """
        def predict_proba(df):
            seen = {}
            for origin in df["Origin"]:
                seen[origin] = seen.get(origin, 0) + 1
            X = df[FEATURES].assign(n=df["Origin"].map(seen))
            return model.predict_proba(X)[:, 1]
    """,
        True,
    ),
    # --- len used only for shapes -----------------------------------------------------------------
    "len(df) as part of a cache key": (
        """
        CACHE = {}
        def predict_proba(df):
            key = (id(df), len(df))
            X = CACHE.get(key)
            if X is None:
                X = df[FEATURES].copy()
                CACHE[key] = X
            return model.predict_proba(X)[:, 1]
    """,
        False,
    ),
    "len(df) sizes an array filled row by row": (
        """
        def predict_proba(df):
            out = np.zeros(len(df))
            positions = np.arange(len(df))
            out[positions] = df["Distance"].to_numpy()[positions] / 1000
            return model.predict_proba(df[FEATURES].assign(d=out))[:, 1]
    """,
        False,
    ),
    "a row's position in the batch as a feature": (
        """
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(pos=np.arange(len(df)) / len(df)))[:, 1]
    """,
        True,
    ),
    # --- groupby: a lookup by the row's own key, or an aggregate of other rows -----------------------
    "groupby transform count (the issue's batch feature)": (
        """
        def prepare(df):
            X = df[FEATURES].copy()
            X["n_day"] = df.groupby(["Month", "DayofMonth"])["DepTime"].transform("count")
            return X
        def predict_proba(df):
            return model.predict_proba(prepare(df))[:, 1]
    """,
        True,
    ),
    "groupby size": (
        """
        def predict_proba(df):
            sizes = df.groupby("Origin").size()
            return model.predict_proba(df[FEATURES].assign(n=df["Origin"].map(sizes)))[:, 1]
    """,
        True,
    ),
    "groupby rank": (
        """
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(r=df.groupby("Origin")["DepTime"].rank()))[:, 1]
    """,
        True,
    ),
    "groupby cumcount": (
        """
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(c=df.groupby("Origin").cumcount()))[:, 1]
    """,
        True,
    ),
    "the number of groups": (
        """
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(g=len(df.groupby("Origin"))))[:, 1]
    """,
        True,
    ),
    "groups only partition the rows: each row's key looked up in a training table": (
        """
        def predict_proba(df):
            out = np.full(len(df), 0.0)
            for key, idx in df.groupby("Origin").groups.items():
                out[idx] = TABLE.get(key, 0.0)
            return model.predict_proba(df[FEATURES].assign(t=out))[:, 1]
    """,
        False,
    ),
    "iterating the groups, each group's rows mapped through a training table": (
        """
        def predict_proba(df):
            out = pd.Series(0.0, index=df.index)
            for key, g in df.groupby("Origin"):
                out[g.index] = g["Dest"].map(COUNTS).fillna(0).to_numpy() + TABLE.get(key, 0.0)
            return model.predict_proba(df[FEATURES].assign(t=out))[:, 1]
    """,
        False,
    ),
    "iterating the groups, each group's size given to its rows": (
        """
        def predict_proba(df):
            out = pd.Series(0.0, index=df.index)
            for key, g in df.groupby("Origin"):
                out[g.index] = len(g)
            return model.predict_proba(df[FEATURES].assign(t=out))[:, 1]
    """,
        True,
    ),
    "iterating the groups, each group's mean given to its rows": (
        """
        def predict_proba(df):
            out = pd.Series(0.0, index=df.index)
            for key, g in df.groupby("Origin"):
                out[g.index] = g["DepTime"].mean()
            return model.predict_proba(df[FEATURES].assign(t=out))[:, 1]
    """,
        True,
    ),
    "groupby transform with a row-wise function of the file": (
        """
        def predict_proba(df):
            t = df.groupby("Origin")["Dest"].transform(lambda s: s.map(COUNTS).fillna(0))
            return model.predict_proba(df[FEATURES].assign(t=t))[:, 1]
    """,
        False,
    ),
    "groupby transform with a function that centres each group": (
        """
        def predict_proba(df):
            t = df.groupby("Origin")["DepTime"].transform(lambda s: s - s.mean())
            return model.predict_proba(df[FEATURES].assign(t=t))[:, 1]
    """,
        True,
    ),
    "groupby transform giving every row its group's first value": (
        """
        def predict_proba(df):
            t = df.groupby("Origin")["DepTime"].transform(lambda s: s.iloc[0])
            return model.predict_proba(df[FEATURES].assign(t=t))[:, 1]
    """,
        True,
    ),
    "groupby on training rows inside predict_proba": (
        """
        def predict_proba(df):
            means = train.groupby("Origin")["DepTime"].mean()
            return model.predict_proba(df[FEATURES].assign(t=df["Origin"].map(means)))[:, 1]
    """,
        False,
    ),
    # --- map: a training-fitted table versus the frame's own counts ----------------------------------
    "map through a table fitted on training rows": (
        """
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(n=df["Origin"].map(COUNTS).fillna(0)))[:, 1]
    """,
        False,
    ),
    "map through the batch's own value_counts": (
        """
        def predict_proba(df):
            n = df["Origin"].map(df["Origin"].value_counts())
            return model.predict_proba(df[FEATURES].assign(n=n))[:, 1]
    """,
        True,
    ),
    # --- merge: with a training table versus with the frame itself ----------------------------------
    "merge with a table fitted on training rows": (
        """
        STATS = train.groupby("Origin", as_index=False)["Distance"].mean()
        def predict_proba(df):
            X = df.merge(STATS, on="Origin", how="left")
            return model.predict_proba(X[FEATURES])[:, 1]
    """,
        False,
    ),
    "merge of the batch with itself": (
        """
        def predict_proba(df):
            pairs = df.merge(df[["Origin", "DepTime"]], on="Origin", suffixes=("", "_other"))
            return model.predict_proba(pairs[FEATURES])[:, 1]
    """,
        True,
    ),
    "join with a row-wise frame of the batch on the index": (
        """
        def predict_proba(df):
            extra = pd.DataFrame({"hour": df["DepTime"] // 100}, index=df.index)
            return model.predict_proba(df[FEATURES].join(extra))[:, 1]
    """,
        False,
    ),
    # --- sorting and ranking ----------------------------------------------------------------------
    "rank of a column": (
        """
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(r=df["DepTime"].rank(pct=True)))[:, 1]
    """,
        True,
    ),
    "argsort of a column": (
        """
        def predict_proba(df):
            order = np.argsort(df["DepTime"].to_numpy())
            return model.predict_proba(df[FEATURES].assign(o=order))[:, 1]
    """,
        True,
    ),
    "sorted, then the previous row's value": (
        """
        def predict_proba(df):
            prev = df.sort_values("DepTime")["DepTime"].shift(1)
            return model.predict_proba(df[FEATURES].assign(p=prev))[:, 1]
    """,
        True,
    ),
    # --- aggregates within each row ---------------------------------------------------------------
    "agg along each row": (
        """
        def predict_proba(df):
            key = df[["Origin", "Dest"]].astype(str).agg("|".join, axis=1)
            return model.predict_proba(df[FEATURES].assign(k=key.map(COUNTS).fillna(0)))[:, 1]
    """,
        False,
    ),
    "agg down the columns": (
        """
        def predict_proba(df):
            means = df[FEATURES].agg("mean")
            return model.predict_proba(df[FEATURES] - means)[:, 1]
    """,
        True,
    ),
    # --- state fitted on the first call -------------------------------------------------------------
    "encoders fitted on the first call, which is on training rows (the batch has no label)": (
        """
        MAPS = {}
        def prepare(df):
            if not MAPS:
                y = (df[TARGET] == "Y").astype(int)
                MAPS["origin"] = y.groupby(df["Origin"]).mean()
            return df[FEATURES].assign(te=df["Origin"].map(MAPS["origin"]))
        model.fit(prepare(train), train[TARGET])
        def predict_proba(df):
            return model.predict_proba(prepare(df))[:, 1]
    """,
        False,
    ),
    "encoders fitted on whatever frame comes first, labels not needed": (
        """
        MAPS = {}
        def prepare(df):
            if "origin" not in MAPS or os.environ.get("REFIT"):
                MAPS["origin"] = df["Origin"].value_counts()
            return df[FEATURES].assign(n=df["Origin"].map(MAPS["origin"]))
        def predict_proba(df):
            return model.predict_proba(prepare(df))[:, 1]
    """,
        True,
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_row_locality(case: str, flagged: Callable[[str], set[str]]) -> None:
    source, expected = CASES[case]
    assert (F in flagged(HEAD + textwrap.dedent(source))) is expected


def test_an_uncertain_axis_says_so_in_the_evidence() -> None:
    source = HEAD + textwrap.dedent(CASES["an axis that is not known is taken to include the rows"][0])
    record = next(r for r in audit_source(source, "t.py") if r.rule == F)
    assert record.verdict == "flagged"
    notes = [s.note for e in record.evidence for s in e.steps]
    assert any("axis not known" in n for n in notes), notes


def test_the_ensemble_mean_is_clear_but_a_member_rank_is_not() -> None:
    # the same program with and without a cross-row step, to show the verdict follows the step
    clear = HEAD + textwrap.dedent(CASES["ensemble mean over the members' axis"][0])
    ranked = clear.replace("m.predict_proba(X)[:, 1]", "rankdata(m.predict_proba(X)[:, 1])")
    assert {r.rule: r.verdict for r in audit_source(clear, "t.py")}[F] == "clear"
    record = next(r for r in audit_source(ranked, "t.py") if r.rule == F)
    assert record.verdict == "flagged"
    assert "rankdata()" in record.evidence[0].summary


def test_a_call_no_table_knows_is_taken_row_wise_and_said_so() -> None:
    source = HEAD + textwrap.dedent(
        """
        import smoothing
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(s=smoothing.smooth(df["DepTime"])))[:, 1]
        """
    )
    record = next(r for r in audit_source(source, "t.py") if r.rule == F)
    assert record.verdict == "clear"
    assert any("smoothing.smooth() (line" in n and "row by row" in n for n in record.notes), record.notes
    # a known row-wise call is not listed
    known = source.replace('smoothing.smooth(df["DepTime"])', 'np.log1p(df["DepTime"])')
    record = next(r for r in audit_source(known, "t.py") if r.rule == F)
    assert record.verdict == "clear" and not any("row by row" in n for n in record.notes)


TABLE_CASES: dict[str, tuple[str, bool]] = {
    "a mapping built from the batch's own rows": (
        """
        def predict_proba(df):
            lookup = dict(zip(df["Dest"], df["DepTime"]))
            return model.predict_proba(df[FEATURES].assign(t=df["Origin"].map(lookup)))[:, 1]
    """,
        True,
    ),
    "membership in the batch's own values": (
        """
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(b=df["Origin"].isin(df["Dest"])))[:, 1]
    """,
        True,
    ),
    "position among the batch's sorted values": (
        """
        def predict_proba(df):
            ref = np.sort(df["DepTime"].to_numpy())
            return model.predict_proba(df[FEATURES].assign(q=np.searchsorted(ref, df["DepTime"])))[:, 1]
    """,
        True,
    ),
    "position among training values looked up per key": (
        """
        SORTED = {o: np.sort(g.to_numpy()) for o, g in train.groupby("Origin")["DepTime"]}
        def predict_proba(df):
            out = np.zeros(len(df))
            for o, idx in df.groupby("Origin").indices.items():
                ref = SORTED.get(o)
                if ref is not None:
                    out[idx] = np.searchsorted(ref, df["DepTime"].to_numpy()[idx]) / len(ref)
            return model.predict_proba(df[FEATURES].assign(q=out))[:, 1]
    """,
        False,
    ),
    "membership in a training set": (
        """
        HUBS = set(train["Origin"].value_counts().index[:10])
        def predict_proba(df):
            return model.predict_proba(df[FEATURES].assign(h=df["Origin"].isin(HUBS)))[:, 1]
    """,
        False,
    ),
}


@pytest.mark.parametrize("case", list(TABLE_CASES), ids=list(TABLE_CASES))
def test_lookup_tables(case: str, flagged: Callable[[str], set[str]]) -> None:
    source, expected = TABLE_CASES[case]
    assert (F in flagged(HEAD + textwrap.dedent(source))) is expected
