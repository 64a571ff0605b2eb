# expect: clear
# Hyper-parameters chosen by eval AUC (evaluation use), the final model refitted on the training rows.
import itertools

import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
ev = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def prep(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


X, y = prep(train), (train[LABEL] == "Y").astype(int)
X_ev, y_ev = prep(ev), (ev[LABEL] == "Y").astype(int)

best_auc, best_params = -1.0, None
for depth, lr in itertools.product([4, 6, 8], [0.05, 0.1]):
    candidate = XGBClassifier(n_estimators=80, max_depth=depth, learning_rate=lr, enable_categorical=True,
                              random_state=42)
    candidate.fit(X, y)
    auc = roc_auc_score(y_ev, candidate.predict_proba(X_ev)[:, 1])
    print(f"depth={depth} lr={lr}: {auc:.4f}")
    if auc > best_auc:
        best_auc, best_params = auc, {"max_depth": depth, "learning_rate": lr}

final = XGBClassifier(n_estimators=80, enable_categorical=True, random_state=42, **best_params)
final.fit(X, y)
print(f"Eval AUC: {roc_auc_score(y_ev, final.predict_proba(X_ev)[:, 1]):.4f}")


def predict_proba(df):
    return final.predict_proba(prep(df))[:, 1]
