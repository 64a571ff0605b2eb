# expect: clear
# More trees with early stopping on the evaluation set (allowed), plus hour-of-day features.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CAT_COLS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train_df = pd.read_csv("data/train.csv")
eval_df = pd.read_csv("data/eval.csv")

category_levels = {c: pd.Index(train_df[c].astype(str).unique()) for c in CAT_COLS}


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    if LABEL in out.columns:
        out = out.drop(columns=LABEL)
    out["dep_hour"] = (out["DepTime"] // 100).clip(0, 24)
    out["dep_minute"] = out["DepTime"] % 100
    out["dep_minutes_of_day"] = out["dep_hour"] * 60 + out["dep_minute"]
    out["log_distance"] = np.log1p(out["Distance"])
    out["route"] = out["Origin"] + "_" + out["Dest"]
    for c in CAT_COLS:
        out[c] = pd.Categorical(out[c].astype(str), categories=category_levels[c])
    out["route"] = pd.Categorical(out["route"], categories=ROUTES)
    return out


ROUTES = pd.Index((train_df["Origin"] + "_" + train_df["Dest"]).unique())

X_tr = prepare(train_df)
y_tr = train_df[LABEL].eq("Y").astype(int)
X_ev = prepare(eval_df)
y_ev = eval_df[LABEL].eq("Y").astype(int)

clf = XGBClassifier(
    n_estimators=600,
    max_depth=7,
    learning_rate=0.05,
    subsample=0.85,
    colsample_bytree=0.8,
    min_child_weight=3,
    enable_categorical=True,
    tree_method="hist",
    eval_metric="auc",
    early_stopping_rounds=40,
    random_state=42,
)
clf.fit(X_tr, y_tr, eval_set=[(X_ev, y_ev)], verbose=50)
print("best iteration:", clf.best_iteration)
eval_pred = clf.predict_proba(X_ev)[:, 1]
print(f"Eval AUC: {roc_auc_score(y_ev, eval_pred):.4f}")


def predict_proba(df):
    X = prepare(df)
    return clf.predict_proba(X)[:, 1]
