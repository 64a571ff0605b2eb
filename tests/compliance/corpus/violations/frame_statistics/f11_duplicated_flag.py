# expect: frame_statistics
# A "repeat booking" flag from duplicated() over the batch's rows.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
KEY = ["Month", "DayofMonth", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
ev = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    X["same_day_route_dup"] = X.duplicated(subset=KEY, keep=False).astype(int)
    X = X.assign(**{c: pd.Categorical(X[c], categories=levels[c]) for c in CATS})
    return X


model = XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(ev[LABEL] == 'Y', model.predict_proba(prepare(ev))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
