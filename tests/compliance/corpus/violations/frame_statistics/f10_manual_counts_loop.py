# expect: frame_statistics
# Route popularity (share of flights on the route) counted by hand in a loop over the rows of the frame.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
ev = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def route_popularity(df):
    counts = {}
    for origin, dest in zip(df["Origin"], df["Dest"]):
        key = (origin, dest)
        counts[key] = counts.get(key, 0) + 1
    total = len(df)
    return [counts[(o, d)] / total for o, d in zip(df["Origin"], df["Dest"])]


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    X["route_pop"] = route_popularity(df)
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(ev[LABEL] == 'Y', model.predict_proba(prepare(ev))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
