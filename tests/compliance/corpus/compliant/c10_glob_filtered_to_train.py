# expect: clear
# Files found by a glob over data/, then picked by name: training rows from train.csv only.
import glob
import os

import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

csv_files = sorted(glob.glob(os.path.join("data", "*.csv")))
by_name = {os.path.splitext(os.path.basename(p))[0]: p for p in csv_files}
print("found:", list(by_name))

train_files = [p for p in csv_files if "train" in os.path.basename(p)]
train = pd.concat([pd.read_csv(p) for p in train_files], ignore_index=True)
evaluation = pd.read_csv(by_name["eval"])
levels = {c: sorted(train[c].unique()) for c in CATS}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore")
    return X.assign(**{c: pd.Categorical(X[c], categories=levels[c]) for c in CATS})


model = XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(train), train[LABEL].eq("Y"), eval_set=[(prepare(evaluation), evaluation[LABEL].eq("Y"))],
          verbose=False)
print(f"Eval AUC: {roc_auc_score(evaluation[LABEL].eq('Y'), model.predict_proba(prepare(evaluation))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
