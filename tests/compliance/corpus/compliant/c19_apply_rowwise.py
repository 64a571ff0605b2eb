# expect: clear
# Row-wise feature functions applied with apply(axis=1) and Series.map with lambdas.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
HUBS = {"ATL", "ORD", "DFW", "DEN", "LAX", "JFK", "SFO", "LAS", "PHX", "IAH"}


def part_of_day(row):
    hour = row["DepTime"] // 100
    if hour < 6:
        return 0
    if hour < 12:
        return 1
    if hour < 18:
        return 2
    return 3


def hub_pair(row):
    return int(row["Origin"] in HUBS) + int(row["Dest"] in HUBS)


def prepare(df, levels):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    X["part_of_day"] = X.apply(part_of_day, axis=1)
    X["hub_pair"] = X.apply(hub_pair, axis=1)
    X["weekday"] = X["DayOfWeek"].map(lambda s: int(s.split("-")[1]))
    X["month_num"] = X["Month"].map(lambda s: int(s[2:]))
    X["row_max_code"] = X[["weekday", "month_num"]].max(axis=1)
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


train = pd.read_csv("data/train.csv")
ev = pd.read_csv("data/eval.csv")
LEVELS = {c: sorted(train[c].unique()) for c in CATS}
model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train, LEVELS), train[LABEL] == "Y", eval_set=[(prepare(ev, LEVELS), ev[LABEL] == "Y")],
          verbose=False)
print(f"Eval AUC: {roc_auc_score(ev[LABEL] == 'Y', model.predict_proba(prepare(ev, LEVELS))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df, LEVELS))[:, 1]
