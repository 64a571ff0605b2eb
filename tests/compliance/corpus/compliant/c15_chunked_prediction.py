# expect: clear
# predict_proba works through large frames in chunks; len(df) only sizes arrays and loops.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
CHUNK = 50_000

train = pd.read_csv("data/train.csv")
ev = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    X["hour"] = X["DepTime"] // 100
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(ev[LABEL] == 'Y', model.predict_proba(prepare(ev))[:, 1]):.4f}")


def predict_proba(df):
    if len(df) == 0:
        return np.zeros(0)
    n = len(df)
    out = np.empty(n, dtype=float)
    n_chunks = max(1, int(np.ceil(n / CHUNK)))
    done = 0
    for idx in np.array_split(np.arange(n), n_chunks):
        out[idx] = model.predict_proba(prepare(df.iloc[idx]))[:, 1]
        done += len(idx)
    assert done == len(df), "lost rows"
    return np.clip(out, 1e-6, 1 - 1e-6)
