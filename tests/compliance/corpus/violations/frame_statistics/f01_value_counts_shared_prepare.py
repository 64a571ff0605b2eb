# expect: frame_statistics
# Frequency encoding inside a prepare() shared by training and predict_proba: counts come from whatever
# frame is passed in, so at scoring time they are counts over the batch.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
FREQ_COLS = ["Origin", "Dest", "UniqueCarrier"]

train = pd.read_csv("data/train.csv")
valid = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for col in FREQ_COLS:
        X[f"{col}_freq"] = X[col].map(X[col].value_counts(normalize=True))
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=200, max_depth=6, learning_rate=0.08, enable_categorical=True,
                      early_stopping_rounds=20, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y", eval_set=[(prepare(valid), valid[LABEL] == "Y")], verbose=False)
print(f"Eval AUC: {roc_auc_score(valid[LABEL] == 'Y', model.predict_proba(prepare(valid))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
