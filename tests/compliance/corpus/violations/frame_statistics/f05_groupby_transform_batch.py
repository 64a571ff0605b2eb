# expect: frame_statistics
# Group statistics of the batch: mean distance and flight count per origin, via groupby().transform().
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
ev = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def with_levels(X):
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


def add_group_features(X):
    grouped = X.groupby("Origin")
    X["origin_mean_dist"] = grouped["Distance"].transform("mean")
    X["origin_n"] = grouped["DepTime"].transform("count")
    X["carrier_hour_n"] = X.groupby(["UniqueCarrier", X["DepTime"] // 100])["DepTime"].transform("size")
    return X


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    return with_levels(add_group_features(X))


model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y", eval_set=[(prepare(ev), ev[LABEL] == "Y")], verbose=False)
print(f"Eval AUC: {roc_auc_score(ev[LABEL] == 'Y', model.predict_proba(prepare(ev))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
