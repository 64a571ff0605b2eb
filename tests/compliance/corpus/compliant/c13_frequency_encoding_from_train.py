# expect: clear
# Frequency encoding whose counts come from the training frame; the batch is only looked up in them.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
FREQ = ["Origin", "Dest", "UniqueCarrier"]
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
valid = pd.read_csv("data/eval.csv")

freq_tables = {col: train[col].value_counts(normalize=True) for col in FREQ}
route_counts = train.groupby(["Origin", "Dest"]).size()
levels = {c: sorted(train[c].unique()) for c in CATS}
N_TRAIN = len(train)


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for col in FREQ:
        X[f"{col}_freq"] = X[col].map(freq_tables[col]).fillna(0.0)
    route_index = pd.MultiIndex.from_frame(X[["Origin", "Dest"]])
    X["route_count"] = route_counts.reindex(route_index).fillna(0).to_numpy() / N_TRAIN
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=250, max_depth=6, learning_rate=0.07, enable_categorical=True,
                      early_stopping_rounds=25, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y", eval_set=[(prepare(valid), valid[LABEL] == "Y")], verbose=False)
print(f"Eval AUC: {roc_auc_score(valid[LABEL] == 'Y', model.predict_proba(prepare(valid))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
