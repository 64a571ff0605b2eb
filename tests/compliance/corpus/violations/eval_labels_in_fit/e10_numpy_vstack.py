# expect: eval_labels_in_fit
# Arrays all the way: np.vstack / np.concatenate glue the evaluation rows onto the training rows.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
paths = {"train": "data/train.csv", "eval": "data/eval.csv"}

raw = {k: pd.read_csv(v) for k, v in paths.items()}
vocab = {c: {v: i for i, v in enumerate(sorted(raw["train"][c].unique()))} for c in CATS}


def to_array(df):
    cat = np.stack([df[c].map(vocab[c]).fillna(-1).to_numpy() for c in CATS], axis=1)
    num = df[["DepTime", "Distance"]].to_numpy()
    return np.concatenate([cat, num], axis=1).astype(np.float32)


arrays = {k: (to_array(df), (df[LABEL] == "Y").to_numpy().astype(int)) for k, df in raw.items()}
X_train, y_train = arrays["train"]
X_eval, y_eval = arrays["eval"]

X_big = np.vstack([X_train, X_eval])
y_big = np.concatenate([y_train, y_eval])
model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, random_state=42)
model.fit(X_big, y_big)
print(f"Eval AUC: {roc_auc_score(y_eval, model.predict_proba(X_eval)[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(to_array(df))[:, 1]
