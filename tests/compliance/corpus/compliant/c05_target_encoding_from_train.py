# expect: clear
# Smoothed target encoding learned on the training rows only; the evaluation rows get the training means.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
TE_COLS = ["Origin", "Dest", "UniqueCarrier"]
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
SMOOTHING = 50.0

train = pd.read_csv("data/train.csv")
valid = pd.read_csv("data/eval.csv")
train["y"] = (train[LABEL] == "Y").astype(int)
prior = train["y"].mean()

encodings = {}
for col in TE_COLS:
    stats = train.groupby(col)["y"].agg(["sum", "count"])
    encodings[col] = (stats["sum"] + prior * SMOOTHING) / (stats["count"] + SMOOTHING)

levels = {c: sorted(train[c].unique()) for c in CATS}


def build_features(df):
    X = pd.DataFrame(index=df.index)
    for col in TE_COLS:
        X[f"{col}_te"] = df[col].map(encodings[col]).fillna(prior).astype(float)
    for c in CATS:
        X[c] = pd.Categorical(df[c], categories=levels[c])
    X["DepTime"] = df["DepTime"]
    X["Distance"] = df["Distance"]
    return X


X_train = build_features(train)
X_valid = build_features(valid)
y_valid = (valid[LABEL] == "Y").astype(int)

model = XGBClassifier(n_estimators=200, max_depth=6, learning_rate=0.08, enable_categorical=True,
                      early_stopping_rounds=20, random_state=42)
model.fit(X_train, train["y"], eval_set=[(X_valid, y_valid)], verbose=False)
print(f"Eval AUC: {roc_auc_score(y_valid, model.predict_proba(X_valid)[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(build_features(df))[:, 1]
