# expect: frame_statistics
# "Congestion" features: departures sorted by time, then previous-flight gaps and rolling counts.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["UniqueCarrier", "Origin", "Dest", "Month", "DayOfWeek", "DayofMonth"]

tr = pd.read_csv("data/train.csv")
ev = pd.read_csv("data/eval.csv")
levels = {c: sorted(tr[c].unique()) for c in CATS}


def congestion(df):
    d = df.sort_values(["Origin", "DepTime"]).copy()
    d["prev_gap"] = d.groupby("Origin")["DepTime"].diff().fillna(0)
    d["next_gap"] = d["DepTime"].shift(-1).fillna(2400) - d["DepTime"]
    d["rolling_dist"] = d["Distance"].rolling(5, min_periods=1).mean()
    return d.sort_index()


def prepare(df):
    X = congestion(df.drop(columns=[LABEL], errors="ignore"))
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=120, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(tr), tr[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(ev[LABEL] == 'Y', model.predict_proba(prepare(ev))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
