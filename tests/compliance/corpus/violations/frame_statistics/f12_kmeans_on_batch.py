# expect: frame_statistics
# Cluster ids from a KMeans fitted on whatever frame comes in (fit_predict on the batch).
import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
ev = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def add_clusters(X):
    coords = np.column_stack([X["DepTime"] / 2400.0, X["Distance"] / 5000.0])
    X["cluster"] = KMeans(n_clusters=8, n_init=3, random_state=0).fit_predict(coords)
    return X


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    X = add_clusters(X)
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(ev[LABEL] == 'Y', model.predict_proba(prepare(ev))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
