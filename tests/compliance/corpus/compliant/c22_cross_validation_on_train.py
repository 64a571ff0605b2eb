# expect: clear
# 5-fold cross-validation on the training rows, then a final fit on them; eval only reported.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
evaluation = pd.read_csv("data/eval.csv")
dtypes = {c: pd.CategoricalDtype(sorted(train[c].unique())) for c in CATS}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for c, dtype in dtypes.items():
        X[c] = X[c].astype(dtype)
    return X


X, y = prepare(train), (train[LABEL] == "Y").astype(int)
cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
model = XGBClassifier(n_estimators=120, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
scores = cross_val_score(model, X, y, cv=cv, scoring="roc_auc")
print(f"CV AUC: {np.mean(scores):.4f} +/- {np.std(scores):.4f}")

model.fit(X, y)
print(f"Eval AUC: {roc_auc_score(evaluation[LABEL] == 'Y', model.predict_proba(prepare(evaluation))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
