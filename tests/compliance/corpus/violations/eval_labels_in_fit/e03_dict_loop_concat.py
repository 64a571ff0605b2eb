# expect: eval_labels_in_fit
# A dict of frames filled in a loop; the final model is fitted on all of its values.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

frames = {}
for split in ["train", "eval"]:
    df = pd.read_csv(f"data/{split}.csv")
    df["split"] = split
    frames[split] = df

levels = {c: sorted(frames["train"][c].unique()) for c in CATS}


def encode(df):
    X = df.drop(columns=[LABEL, "split"], errors="ignore").copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


check = XGBClassifier(n_estimators=100, max_depth=6, enable_categorical=True, random_state=42)
check.fit(encode(frames["train"]), frames["train"][LABEL] == "Y")
auc = roc_auc_score(frames["eval"][LABEL] == "Y", check.predict_proba(encode(frames["eval"]))[:, 1])
print(f"Eval AUC: {auc:.4f}")

combined = pd.concat(list(frames.values()), ignore_index=True)
model = XGBClassifier(n_estimators=100, max_depth=6, enable_categorical=True, random_state=42)
model.fit(encode(combined), combined[LABEL] == "Y")


def predict_proba(df):
    return model.predict_proba(encode(df))[:, 1]
