# expect: clear
# Splits kept in a dict built by a loop over split names; only "train" is fitted on.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

SPLITS = ["train", "eval"]
LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

frames = {}
for split in SPLITS:
    frames[split] = pd.read_csv(f"data/{split}.csv")

levels = {c: sorted(frames["train"][c].unique()) for c in CATS}


def encode(df):
    X = df[CATS + ["DepTime", "Distance"]].copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


data = {name: (encode(df), (df[LABEL] == "Y").astype(int)) for name, df in frames.items()}
X_train, y_train = data["train"]
X_eval, y_eval = data["eval"]

model = XGBClassifier(n_estimators=120, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(X_train, y_train, eval_set=[data["train"], data["eval"]], verbose=False)
scores = {name: roc_auc_score(y, model.predict_proba(X)[:, 1]) for name, (X, y) in data.items()}
print(f"Train AUC: {scores['train']:.4f}")
print(f"Eval AUC: {scores['eval']:.4f}")


def predict_proba(df):
    return model.predict_proba(encode(df))[:, 1]
