"""The taint engine on small snippets: each case is a minimal train.py fragment and the rules it breaks.

E = eval_labels_in_fit, F = frame_statistics. The snippets do not need to run; they need to parse.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from orchestrator.compliance.dataflow import Role, analyze
from orchestrator.compliance.values import Kind

E = "eval_labels_in_fit"
F = "frame_statistics"
HEAD = """
import glob, os
import numpy as np
import pandas as pd
import xgboost as xgb
from pathlib import Path
from sklearn.preprocessing import StandardScaler
from xgboost import XGBClassifier
model = XGBClassifier()
"""

EVAL_CASES: dict[str, tuple[str, set[str]]] = {
    "literal path, concat with train": (
        """
        tr = pd.read_csv("data/train.csv"); ev = pd.read_csv("data/eval.csv")
        model.fit(pd.concat([tr, ev]), y)
    """,
        {E},
    ),
    "a rebound variable is flow-sensitive": (
        """
        p = "data/eval.csv"
        check = pd.read_csv(p)
        p = "data/train.csv"
        model.fit(pd.read_csv(p), y)
    """,
        set(),
    ),
    "eval_set is the allowed early-stopping set": (
        """
        tr = pd.read_csv("data/train.csv"); ev = pd.read_csv("data/eval.csv")
        model.fit(tr, tr.y, eval_set=[(ev, ev.y)], early_stopping_rounds=5)
    """,
        set(),
    ),
    "xgb.train evals allowed": (
        """
        dtr = xgb.DMatrix(pd.read_csv("data/train.csv"))
        dev = xgb.DMatrix(pd.read_csv("data/eval.csv"))
        bst = xgb.train({}, dtr, 100, evals=[(dev, "eval")])
    """,
        set(),
    ),
    "xgb.train on an eval DMatrix": (
        """
        ev = pd.read_csv("data/eval.csv")
        dev = xgb.DMatrix(ev.drop(columns="y"), label=ev.y)
        bst = xgb.train({}, dtrain=dev)
    """,
        {E},
    ),
    "DMatrix label from eval": (
        """
        tr = pd.read_csv("data/train.csv"); ev = pd.read_csv("data/eval.csv")
        bst = xgb.train({}, xgb.DMatrix(tr, label=ev["y"]))
    """,
        {E},
    ),
    "dict keys stay apart": (
        """
        d = {"tr": pd.read_csv("data/train.csv"), "ev": pd.read_csv("data/eval.csv")}
        model.fit(d["tr"], d["tr"].y, eval_set=[(d["ev"], d["ev"].y)])
    """,
        set(),
    ),
    "dict value for eval reaches fit": (
        """
        d = {"tr": pd.read_csv("data/train.csv"), "ev": pd.read_csv("data/eval.csv")}
        model.fit(d["ev"], d["ev"].y)
    """,
        {E},
    ),
    "unrolled loop over split names keeps keys apart": (
        """
        frames = {}
        for s in ("train", "eval"):
            frames[s] = pd.read_csv(f"data/{s}.csv")
        model.fit(frames["train"], frames["train"].y)
    """,
        set(),
    ),
    "loop over split names, fit on all": (
        """
        parts = []
        for s in ["train", "eval"]:
            parts.append(pd.read_csv("data/" + s + ".csv"))
        model.fit(pd.concat(parts), y)
    """,
        {E},
    ),
    "glob over data/ includes eval": (
        """
        df = pd.concat([pd.read_csv(f) for f in glob.glob("data/*.csv")])
        model.fit(df, df.y)
    """,
        {E},
    ),
    "glob filtered to train": (
        """
        files = [f for f in glob.glob("data/*.csv") if "train" in f]
        model.fit(pd.read_csv(files[0]), y)
    """,
        set(),
    ),
    "glob with an unknown folder is assumed to include eval": (
        """
        df = pd.concat(map(pd.read_csv, glob.glob(os.environ["DATA"] + "/*.csv")))
        model.fit(df, df.y)
    """,
        {E},
    ),
    "os.listdir loop": (
        """
        for name in os.listdir("data"):
            df = pd.read_csv(os.path.join("data", name))
            model.partial_fit(df, df.y)
    """,
        {E},
    ),
    "pathlib division": (
        """
        root = Path(__file__).parent / "data"
        model.fit(pd.read_csv(root / "eval.csv"), y)
    """,
        {E},
    ),
    "str.replace to the eval path": (
        """
        TRAIN = "data/train.csv"
        model.fit(pd.read_csv(TRAIN.replace("train", "eval")), y)
    """,
        {E},
    ),
    "helper returning a frame by split name": (
        """
        def load(split):
            return pd.read_csv(f"data/{split}.csv")
        model.fit(load("train"), y, eval_set=[(load("eval"), y2)])
    """,
        set(),
    ),
    "helper called with eval for training": (
        """
        def load(split):
            return pd.read_csv(f"data/{split}.csv")
        model.fit(load("eval"), y)
    """,
        {E},
    ),
    "in-place change by a helper is copied back": (
        """
        def add_te(target, source):
            target["te"] = target.Origin.map(source.groupby("Origin").y.mean())
        tr = pd.read_csv("data/train.csv"); ev = pd.read_csv("data/eval.csv")
        add_te(tr, ev)
        model.fit(tr, tr.y)
    """,
        {E},
    ),
    "a helper that copies before changing leaves the caller alone": (
        """
        def add_te(target, source):
            target = target.copy()
            target["te"] = target.Origin.map(source.groupby("Origin").y.mean())
            return target
        tr = pd.read_csv("data/train.csv"); ev = pd.read_csv("data/eval.csv")
        ev2 = add_te(ev, tr)
        model.fit(tr, tr.y)
    """,
        set(),
    ),
    "attribute store on an object": (
        """
        class Box: pass
        box = Box()
        box.frame = pd.read_csv("data/eval.csv")
        model.fit(box.frame, box.frame.y)
    """,
        {E},
    ),
    "method on self with eval field": (
        """
        class T:
            def __init__(self):
                self.tr = pd.read_csv("data/train.csv")
                self.ev = pd.read_csv("data/eval.csv")
            def run(self, use_eval):
                data = pd.concat([self.tr, self.ev]) if use_eval else self.tr
                model.fit(data, data.y)
        T().run(True)
    """,
        {E},
    ),
    "a constant argument decides the branch": (
        """
        class T:
            def __init__(self):
                self.tr = pd.read_csv("data/train.csv")
                self.ev = pd.read_csv("data/eval.csv")
            def run(self, use_eval):
                data = pd.concat([self.tr, self.ev]) if use_eval else self.tr
                model.fit(data, data.y)
        T().run(use_eval=False)
    """,
        set(),
    ),
    "target encoding from eval labels becomes a feature": (
        """
        tr = pd.read_csv("data/train.csv"); ev = pd.read_csv("data/eval.csv")
        te = ev.groupby("Origin")["y"].mean()
        tr["te"] = tr["Origin"].map(te)
        model.fit(tr[["te"]], tr.y)
    """,
        {E},
    ),
    "target encoding from train applied to eval": (
        """
        tr = pd.read_csv("data/train.csv"); ev = pd.read_csv("data/eval.csv")
        te = tr.groupby("Origin")["y"].mean()
        ev["te"] = ev["Origin"].map(te)
        model.fit(tr[["Distance"]], tr.y, eval_set=[(ev[["te"]], ev.y)])
    """,
        set(),
    ),
    "np.vstack of arrays": (
        """
        Xt = pd.read_csv("data/train.csv").to_numpy(); Xe = pd.read_csv("data/eval.csv").to_numpy()
        model.fit(np.vstack([Xt, Xe]), np.r_[yt, ye])
    """,
        {E},
    ),
    "labels from eval, features from train": (
        """
        ev = pd.read_csv("data/eval.csv"); tr = pd.read_csv("data/train.csv")
        model.fit(tr.drop(columns="y"), ev["y"].to_numpy()[: len(tr)])
    """,
        {E},
    ),
    "continued training from an eval-trained model": (
        """
        ev = pd.read_csv("data/eval.csv"); tr = pd.read_csv("data/train.csv")
        m1 = XGBClassifier().fit(ev, ev.y)
        model.fit(tr, tr.y, xgb_model=m1.get_booster())
    """,
        {E},
    ),
    "a scaler fitted on eval rows alone, used on eval rows only": (
        """
        ev = pd.read_csv("data/eval.csv"); tr = pd.read_csv("data/train.csv")
        ev_scaled = StandardScaler().fit_transform(ev)
        model.fit(tr, tr.y)
    """,
        set(),
    ),
    "a scaler fitted on train and eval, applied to train": (
        """
        ev = pd.read_csv("data/eval.csv"); tr = pd.read_csv("data/train.csv")
        sc = StandardScaler().fit(pd.concat([tr, ev]))
        model.fit(sc.transform(tr), tr.y)
    """,
        {E},
    ),
    "a function nobody calls is still checked": (
        """
        def retrain_all():
            full = pd.concat([pd.read_csv("data/train.csv"), pd.read_csv("data/eval.csv")])
            model.fit(full, full.y)
    """,
        {E},
    ),
    "main() under __name__ guard": (
        """
        def main():
            full = pd.concat([pd.read_csv("data/train.csv"), pd.read_csv("data/eval.csv")])
            model.fit(full, full.y)
        if __name__ == "__main__":
            main()
    """,
        {E},
    ),
    "lambda loader": (
        """
        load = lambda s: pd.read_csv(f"data/{s}.csv")
        model.fit(load("train"), y, eval_set=[(load("eval"), y2)])
    """,
        set(),
    ),
    "argparse defaults kept apart": (
        """
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("--train", default="data/train.csv")
        ap.add_argument("--eval", default="data/eval.csv")
        a = ap.parse_args()
        model.fit(pd.read_csv(a.train), y, eval_set=[(pd.read_csv(a.eval), y2)])
    """,
        set(),
    ),
    "argparse eval option trained on": (
        """
        import argparse
        ap = argparse.ArgumentParser()
        ap.add_argument("--eval-file", default="data/eval.csv")
        a = ap.parse_args()
        model.fit(pd.read_csv(a.eval_file), y)
    """,
        {E},
    ),
    "environment variable default": (
        """
        path = os.environ.get("EVAL_PATH", "data/eval.csv")
        model.fit(pd.read_csv(path), y)
    """,
        {E},
    ),
    "a bare word eval is not a file": (
        """
        SPLIT = "eval"
        model.fit(pd.read_csv("data/train.csv"), y)
        print(SPLIT)
    """,
        set(),
    ),
    "generator yielding frames": (
        """
        def frames():
            for name in ("train.csv", "eval.csv"):
                yield pd.read_csv("data/" + name)
        model.fit(pd.concat(list(frames())), y)
    """,
        {E},
    ),
    "while loop accumulation": (
        """
        paths = ["data/train.csv", "data/eval.csv"]
        acc = []
        while paths:
            acc.append(pd.read_csv(paths.pop()))
        model.fit(pd.concat(acc), y)
    """,
        {E},
    ),
    "cross_val_score on eval": (
        """
        from sklearn.model_selection import cross_val_score
        ev = pd.read_csv("data/eval.csv")
        cross_val_score(model, ev.drop(columns="y"), ev.y)
    """,
        {E},
    ),
    "walrus": (
        """
        if (ev := pd.read_csv("data/eval.csv")) is not None:
            model.fit(ev, ev.y)
    """,
        {E},
    ),
    "DataFrame.append of the eval rows (old pandas)": (
        """
        tr = pd.read_csv(Path("data") / "train.csv")
        tr = tr.append(pd.read_csv((Path("data") / "train.csv").with_name("eval.csv")))
        model.fit(tr, tr.y)
    """,
        {E},
    ),
    "try block": (
        """
        try:
            extra = pd.read_csv("data/eval.csv")
        except FileNotFoundError:
            extra = None
        model.fit(pd.concat([pd.read_csv("data/train.csv"), extra]), y)
    """,
        {E},
    ),
}

FRAME_CASES: dict[str, tuple[str, set[str]]] = {
    "value_counts on the batch": (
        """
        def predict_proba(df):
            df["f"] = df.Origin.map(df.Origin.value_counts())
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "value_counts on train, looked up for the batch": (
        """
        FREQ = pd.read_csv("data/train.csv").Origin.value_counts()
        def predict_proba(df):
            df["f"] = df.Origin.map(FREQ)
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "len(df) as a feature": (
        """
        def predict_proba(df):
            df["n"] = len(df)
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "df.shape[0] as a feature": (
        """
        def predict_proba(df):
            return model.predict_proba(df.assign(n=df.shape[0]))[:, 1]
    """,
        {F},
    ),
    "len(df) only sizes arrays and loops": (
        """
        def predict_proba(df):
            out = np.zeros(len(df))
            for i in range(0, len(df), 1000):
                out[i:i + 1000] = model.predict_proba(df.iloc[i:i + 1000])[:, 1]
            return out
    """,
        set(),
    ),
    "a constant list repeated len(df) times": (
        """
        def predict_proba(df):
            if model is None:
                return np.array([0.2] * len(df))
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "row positions from np.arange only select rows": (
        """
        def predict_proba(df):
            out = np.empty(len(df))
            for idx in np.array_split(np.arange(len(df)), 4):
                out[idx] = model.predict_proba(df.iloc[idx])[:, 1]
            return out
    """,
        set(),
    ),
    "groupby transform on the batch": (
        """
        def predict_proba(df):
            df["m"] = df.groupby("Origin").Distance.transform("mean")
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "groupby on the training frame inside predict_proba": (
        """
        TRAIN = pd.read_csv("data/train.csv")
        def predict_proba(df):
            m = TRAIN.groupby("Origin").Distance.mean()
            df["m"] = df.Origin.map(m)
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "an aggregate across columns of each row": (
        """
        def predict_proba(df):
            df["s"] = df[["DepTime", "Distance"]].sum(axis=1)
            df["mx"] = np.max(df[["DepTime", "Distance"]].to_numpy(), axis=1)
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "an aggregate down the rows": (
        """
        def predict_proba(df):
            df["c"] = df.Distance - df.Distance.mean()
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "apply along rows": (
        """
        def predict_proba(df):
            df["s"] = df.apply(lambda r: r[["DepTime", "Distance"]].max(), axis=1)
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "apply down columns": (
        """
        def predict_proba(df):
            num = df[["DepTime", "Distance"]].apply(lambda col: (col - col.mean()) / col.std())
            return model.predict_proba(num)[:, 1]
    """,
        {F},
    ),
    "scaler fitted on the batch": (
        """
        def predict_proba(df):
            X = StandardScaler().fit_transform(df[["DepTime"]])
            return model.predict_proba(X)[:, 1]
    """,
        {F},
    ),
    "scaler fitted on train, applied to the batch": (
        """
        SC = StandardScaler().fit(pd.read_csv("data/train.csv")[["DepTime"]])
        def predict_proba(df):
            return model.predict_proba(SC.transform(df[["DepTime"]]))[:, 1]
    """,
        set(),
    ),
    "qcut on the batch": (
        """
        def predict_proba(df):
            df["q"] = pd.qcut(df.Distance, 5, labels=False)
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "cut with fixed edges": (
        """
        EDGES = [0, 500, 1000, 5000]
        def predict_proba(df):
            df["b"] = pd.cut(df.Distance, bins=EDGES, labels=False)
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "cut with a number of bins": (
        """
        def predict_proba(df):
            df["b"] = pd.cut(df.Distance, 10, labels=False)
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "category levels from the batch are matched by value by the model": (
        """
        def predict_proba(df):
            df["Origin"] = df["Origin"].astype("category")
            df["Dest"] = pd.Categorical(df["Dest"])
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "integer codes of category levels from the batch": (
        """
        def predict_proba(df):
            df["origin_code"] = df["Origin"].astype("category").cat.codes
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "integer codes after the levels are fixed from train": (
        """
        LEVELS = pd.read_csv("data/train.csv").Origin.unique()
        def predict_proba(df):
            df["origin_code"] = df["Origin"].astype("category").cat.set_categories(LEVELS).cat.codes
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "factorize the batch": (
        """
        def predict_proba(df):
            df["origin_code"], _ = pd.factorize(df["Origin"])
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "category levels fixed from train": (
        """
        LEVELS = pd.read_csv("data/train.csv").Origin.unique()
        def predict_proba(df):
            df["Origin"] = df["Origin"].astype(pd.CategoricalDtype(LEVELS))
            df["Dest"] = pd.Categorical(df["Dest"], categories=LEVELS)
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "shift and rolling": (
        """
        def predict_proba(df):
            df["prev"] = df.DepTime.shift(1)
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "np.mean of a column": (
        """
        def predict_proba(df):
            x = df.Distance.to_numpy()
            return model.predict_proba(np.c_[x, x / np.mean(x)])[:, 1]
    """,
        {F},
    ),
    "statistics computed only when none are passed": (
        """
        TRAIN = pd.read_csv("data/train.csv")
        def prepare(df, stats=None):
            if stats is None:
                stats = df.Distance.mean()
            return df.assign(d=df.Distance / stats)
        STATS = TRAIN.Distance.mean()
        model.fit(prepare(TRAIN), TRAIN.y)
        def predict_proba(df):
            return model.predict_proba(prepare(df, STATS))[:, 1]
    """,
        set(),
    ),
    "a shared prepare with a batch statistic": (
        """
        TRAIN = pd.read_csv("data/train.csv")
        def prepare(df):
            return df.assign(d=df.Distance / df.Distance.mean())
        model.fit(prepare(TRAIN), TRAIN.y)
        def predict_proba(df):
            return model.predict_proba(prepare(df))[:, 1]
    """,
        {F},
    ),
    "statistics cached in a global on first call": (
        """
        _STATS = None
        def predict_proba(df):
            global _STATS
            if _STATS is None:
                _STATS = df.Distance.median()
            return model.predict_proba(df.assign(d=df.Distance - _STATS))[:, 1]
    """,
        {F},
    ),
    "rows remembered across calls": (
        """
        SEEN = []
        def predict_proba(df):
            SEEN.append(df)
            allrows = pd.concat(SEEN)
            df["n"] = df.Origin.map(allrows.Origin.value_counts())
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "predictions normalised over the batch": (
        """
        def predict_proba(df):
            p = model.predict_proba(df)[:, 1]
            return (p - p.mean()) / p.std()
    """,
        {F},
    ),
    "predictions clipped and wrapped": (
        """
        def predict_proba(df):
            p = np.clip(model.predict_proba(df)[:, 1], 1e-6, 1 - 1e-6)
            return pd.Series(p, index=df.index).to_numpy()
    """,
        set(),
    ),
    "row loop building lists": (
        """
        def predict_proba(df):
            hours = []
            for _, row in df.iterrows():
                hours.append(row.DepTime // 100)
            df["h"] = hours
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "row loop counting values": (
        """
        def predict_proba(df):
            counts = {}
            for o in df.Origin:
                counts[o] = counts.get(o, 0) + 1
            df["c"] = [counts[o] for o in df.Origin]
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "sorted values of a column": (
        """
        def predict_proba(df):
            ranks = {v: i for i, v in enumerate(sorted(df.Distance))}
            df["r"] = df.Distance.map(ranks)
            return model.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "percentile of the batch's values": (
        """
        def predict_proba(df):
            med = np.percentile(df[["DepTime"]].values, 50, axis=0)
            return model.predict_proba(df[["DepTime"]].values - med)[:, 1]
    """,
        {F},
    ),
    "transform with a function of each column": (
        """
        def predict_proba(df):
            return model.predict_proba(df.transform(lambda s: s.rank()))[:, 1]
    """,
        {F},
    ),
    "forward fill": (
        """
        def predict_proba(df):
            return model.predict_proba(df.ffill())[:, 1]
    """,
        {F},
    ),
    "fill with a constant": (
        """
        def predict_proba(df):
            return model.predict_proba(df.fillna(0))[:, 1]
    """,
        set(),
    ),
    "string accessor methods are element-wise": (
        """
        def predict_proba(df):
            df["dashes"] = df.Month.str.count("-")
            df["m"] = df.Month.str.replace("c-", "").astype(int)
            return model.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "predict_proba bound to an instance of the file": (
        """
        class M:
            def predict_proba(self, df):
                return model.predict_proba(df.assign(r=df.DepTime.rank()))[:, 1]
        predict_proba = M().predict_proba
    """,
        {F},
    ),
    "a statistic that only steers control flow is not traced (known limit)": (
        """
        def predict_proba(df):
            if df.DepTime.mean() > 1200:
                return model.predict_proba(df)[:, 1]
            return model.predict_proba(df)[:, 1] * 0.9
    """,
        set(),
    ),
}


@pytest.mark.parametrize("case", list(EVAL_CASES), ids=list(EVAL_CASES))
def test_eval_rule_cases(case: str, flagged: Callable[[str], set[str]]) -> None:
    source, expected = EVAL_CASES[case]
    assert flagged(HEAD + textwrap.dedent(source)) & {E} == expected


@pytest.mark.parametrize("case", list(FRAME_CASES), ids=list(FRAME_CASES))
def test_frame_rule_cases(case: str, flagged: Callable[[str], set[str]]) -> None:
    source, expected = FRAME_CASES[case]
    assert flagged(HEAD + textwrap.dedent(source)) & {F} == expected


def test_path_runs_from_source_to_sink() -> None:
    source = (
        "import pandas as pd\n"
        'EVAL = "data/eval.csv"\n'
        "ev = pd.read_csv(EVAL)\n"
        "X_all = pd.concat([X, ev])\n"
        "model.fit(X_all, y_all)\n"
    )
    hits = [h for h in analyze(source).hits if h.role is Role.TRAIN and h.kind is Kind.EVAL]
    assert len(hits) == 1
    steps = hits[0].path
    assert [s.line for s in steps] == [2, 3, 4, 5]
    assert steps[0].names == ("EVAL",)
    assert steps[1].names == ("EVAL", "ev")
    assert steps[2].names == ("ev", "X_all")
    assert steps[3].names == ("X_all",)
    assert steps[3].code == "model.fit(X_all, y_all)"


def test_interprocedural_path_names_parameters() -> None:
    source = (
        "import pandas as pd\n"
        "def prepare(df):\n"
        "    df = df.copy()\n"
        "    df['f'] = df.Origin.map(df.Origin.value_counts())\n"
        "    return df\n"
        "def predict_proba(df):\n"
        "    return model.predict_proba(prepare(df))[:, 1]\n"
    )
    hits = [h for h in analyze(source).hits if h.role is Role.PREDICT and h.kind is Kind.BATCH_STAT]
    assert hits
    steps = hits[0].path
    assert steps[0].line == 6 and steps[0].scope == "predict_proba"
    assert any("prepare:df" in s.names for s in steps)
    stat = next(s for s in steps if "value_counts" in s.note)
    assert stat.line == 4 and stat.scope == "prepare"
    assert steps[-1].line == 7


def test_budget_exhaustion_is_reported_not_clear() -> None:
    analysis = analyze("x = 1\n" * 50, budget=10)
    assert not analysis.complete
    assert analysis.notes


COMPOSITE_CASES: dict[str, tuple[str, set[str]]] = {
    "the file's transformer inside a Pipeline sees the batch": (
        """
        from sklearn.base import BaseEstimator, TransformerMixin
        from sklearn.pipeline import Pipeline
        class Freq(BaseEstimator, TransformerMixin):
            def fit(self, X, y=None):
                return self
            def transform(self, X):
                return X.assign(f=X.Origin.map(X.Origin.value_counts()))
        pipe = Pipeline([("freq", Freq()), ("model", XGBClassifier())])
        pipe.fit(pd.read_csv("data/train.csv"), y)
        def predict_proba(df):
            return pipe.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "the file's transformer fitted on train inside a Pipeline": (
        """
        from sklearn.base import BaseEstimator, TransformerMixin
        from sklearn.pipeline import make_pipeline
        class Freq(BaseEstimator, TransformerMixin):
            def fit(self, X, y=None):
                self.freq_ = X.Origin.value_counts()
                return self
            def transform(self, X):
                return X.assign(f=X.Origin.map(self.freq_))
        pipe = make_pipeline(Freq(), XGBClassifier())
        pipe.fit(pd.read_csv("data/train.csv"), y)
        def predict_proba(df):
            return pipe.predict_proba(df)[:, 1]
    """,
        set(),
    ),
    "a FunctionTransformer of the file's function": (
        """
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import FunctionTransformer
        def rank_features(X):
            return X.assign(r=X.DepTime.rank(pct=True))
        pipe = make_pipeline(FunctionTransformer(rank_features), XGBClassifier())
        def predict_proba(df):
            return pipe.predict_proba(df)[:, 1]
    """,
        {F},
    ),
    "a pickled model of the file's class": (
        """
        import joblib
        class Model:
            def predict(self, df):
                return model.predict_proba(df.assign(n=len(df)))[:, 1]
        def predict_proba(df):
            return joblib.load("model.joblib").predict(df)
    """,
        {F},
    ),
}


@pytest.mark.parametrize("case", list(COMPOSITE_CASES), ids=list(COMPOSITE_CASES))
def test_composite_cases(case: str, flagged: Callable[[str], set[str]]) -> None:
    source, expected = COMPOSITE_CASES[case]
    assert flagged(HEAD + textwrap.dedent(source)) & {F} == expected


def test_the_batch_has_no_label_column(flagged: Callable[[str], set[str]]) -> None:
    # the training branch (label present) summarises its frame; the scorer's batch never takes it
    source = """
        STATS = {}
        def prepare(df):
            if "dep_delayed_15min" in df.columns:
                STATS["mean"] = df.Distance.mean()
            return df.assign(d=df.Distance / STATS["mean"])
        model.fit(prepare(pd.read_csv("data/train.csv")), y)
        def predict_proba(df):
            return model.predict_proba(prepare(df))[:, 1]
    """
    assert flagged(HEAD + textwrap.dedent(source)) == set()
    assert flagged(HEAD + textwrap.dedent(source).replace('"dep_delayed_15min" in', '"Origin" in')) == {F}


def test_state_left_by_one_batch_for_the_next(flagged: Callable[[str], set[str]]) -> None:
    source = """
        _LAST = None
        def predict_proba(df):
            global _LAST
            shift = _LAST if _LAST is not None else 0.0
            _LAST = df.Distance.mean()
            return model.predict_proba(df.assign(d=df.Distance - shift))[:, 1]
    """
    assert flagged(HEAD + textwrap.dedent(source)) == {F}


def test_predict_proba_as_a_callable_object(flagged: Callable[[str], set[str]]) -> None:
    source = """
        class Predictor:
            def __call__(self, df):
                return model.predict_proba(df.assign(n=len(df)))[:, 1]
        predict_proba = Predictor()
    """
    assert flagged(HEAD + textwrap.dedent(source)) == {F}
