# expect: eval_labels_in_fit
# A loop over os.listdir("data") appends every CSV it finds to the training parts.
import os

import pandas as pd
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
DATA_DIR = "data"

parts = []
for fname in sorted(os.listdir(DATA_DIR)):
    if not fname.endswith(".csv"):
        continue
    part = pd.read_csv(os.path.join(DATA_DIR, fname))
    print(f"loaded {fname}: {len(part)} rows")
    parts.append(part)
data = pd.concat(parts, ignore_index=True)
levels = {c: sorted(data[c].unique()) for c in CATS}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


model = XGBClassifier(n_estimators=100, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(prepare(data), (data[LABEL] == "Y").astype(int))
print("Eval AUC: skipped")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
