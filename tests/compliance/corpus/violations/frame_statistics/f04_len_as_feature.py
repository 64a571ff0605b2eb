# expect: frame_statistics
# Row position as a "season" proxy (the files are in date order), scaled by the number of rows in the frame:
# at scoring time both the position and the count are the batch's.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
evaluation = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def featurize(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    n = len(df)
    X["season_pos"] = np.arange(n) / max(n - 1, 1)
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(featurize(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(evaluation[LABEL] == 'Y', model.predict_proba(featurize(evaluation))[:, 1]):.4f}")


def predict_proba(df):
    out = np.empty(len(df))
    for start in range(0, len(df), 100_000):
        chunk = df.iloc[start:start + 100_000]
        out[start:start + len(chunk)] = model.predict_proba(featurize(chunk))[:, 1]
    return out
