# expect: frame_statistics
# Category codes as plain integers: the codes number the levels present in the frame, so the same airport
# gets a different number in a different batch.
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]


def to_numeric(df):
    X = pd.DataFrame(index=df.index)
    for c in CATS:
        X[c] = df[c].astype("category").cat.codes
    X["DepTime"] = df["DepTime"]
    X["Distance"] = df["Distance"]
    return X.to_numpy(dtype=np.float32)


train = pd.read_csv("data/train.csv")
valid = pd.read_csv("data/eval.csv")
clf = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.08, random_state=42)
clf.fit(to_numeric(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(valid[LABEL] == 'Y', clf.predict_proba(to_numeric(valid))[:, 1]):.4f}")


def predict_proba(df):
    return clf.predict_proba(to_numeric(df))[:, 1]
