# expect: clear
# One loader for both splits, called with the split name; the training frame is the "train" split only.
import os

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

ROOT = os.path.dirname(os.path.abspath(__file__))
LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]


def split_path(split):
    return os.path.join(ROOT, "data", f"{split}.csv")


def load(split):
    frame = pd.read_csv(split_path(split))
    y = (frame.pop(LABEL) == "Y").astype(np.int8)
    return frame, y


def categorize(X, levels):
    X = X.copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


X_train, y_train = load("train")
X_valid, y_valid = load("eval")
LEVELS = {c: sorted(X_train[c].unique()) for c in CATS}
X_train, X_valid = categorize(X_train, LEVELS), categorize(X_valid, LEVELS)

model = XGBClassifier(n_estimators=400, max_depth=6, learning_rate=0.05, enable_categorical=True,
                      early_stopping_rounds=30, eval_metric="auc", random_state=42)
model.fit(X_train, y_train, eval_set=[(X_train, y_train), (X_valid, y_valid)], verbose=False)
print(f"Eval AUC: {roc_auc_score(y_valid, model.predict_proba(X_valid)[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(categorize(df.drop(columns=[LABEL], errors="ignore"), LEVELS))[:, 1]
