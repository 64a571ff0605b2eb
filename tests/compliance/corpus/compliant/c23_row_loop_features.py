# expect: clear
# Features built row by row in a Python loop over the frame: each row's values only.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
RED_EYE = range(0, 500)


def row_features(df):
    hours, red_eye, long_haul = [], [], []
    for rec in df.itertuples(index=False):
        h = rec.DepTime // 100
        hours.append(h)
        red_eye.append(1 if rec.DepTime in RED_EYE else 0)
        long_haul.append(int(rec.Distance > 1500))
    return pd.DataFrame({"hour": hours, "red_eye": red_eye, "long_haul": long_haul}, index=df.index)


def prepare(df, levels):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    X = X.join(row_features(X))
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


train = pd.read_csv("data/train.csv")
evalset = pd.read_csv("data/eval.csv")
LEVELS = {c: sorted(train[c].unique()) for c in CATS}
model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train, LEVELS), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(evalset[LABEL] == 'Y', model.predict_proba(prepare(evalset, LEVELS))[:, 1]):.4f}")


def predict_proba(df):
    return np.asarray(model.predict_proba(prepare(df, LEVELS))[:, 1], dtype=float)
