# expect: frame_statistics
# "Robust" cleaning: clip to the 1st/99th percentiles and fill gaps with medians -- of the batch.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
NUMERIC = ["DepTime", "Distance"]

train = pd.read_csv("data/train.csv")
valid = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def clean(df):
    df = df.copy()
    lo, hi = df[NUMERIC].quantile(0.01), df[NUMERIC].quantile(0.99)
    df[NUMERIC] = df[NUMERIC].clip(lower=lo, upper=hi, axis=1)
    df[NUMERIC] = df[NUMERIC].fillna(df[NUMERIC].median())
    return df


def prepare(df):
    X = clean(df.drop(columns=[LABEL], errors="ignore"))
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(valid[LABEL] == 'Y', model.predict_proba(prepare(valid))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
