"""Starting code: an XGBoost model that predicts whether a flight departs 15+ minutes late."""

import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

TARGET = "dep_delayed_15min"

train = pd.read_csv("data/train.csv")
valid = pd.read_csv("data/eval.csv")

CATEGORICAL = [c for c in train.columns if c != TARGET and not pd.api.types.is_numeric_dtype(train[c])]
LEVELS = {c: pd.Index(sorted(train[c].astype(str).unique())) for c in CATEGORICAL}


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Features for the model: string columns become categoricals with the levels seen in training
    (a level never seen in training becomes missing)."""
    X = df.drop(columns=[TARGET], errors="ignore").copy()
    for c in CATEGORICAL:
        codes = LEVELS[c].get_indexer(X[c].astype(str))
        X[c] = pd.Categorical.from_codes(codes, categories=LEVELS[c])
    return X


y_train = (train[TARGET] == "Y").astype(int)
y_valid = (valid[TARGET] == "Y").astype(int)

model = XGBClassifier(
    n_estimators=30,
    max_depth=6,
    learning_rate=0.1,
    enable_categorical=True,
    random_state=42,
)
model.fit(prepare(train), y_train, eval_set=[(prepare(valid), y_valid)], verbose=False)

print(f"Eval AUC: {roc_auc_score(y_valid, model.predict_proba(prepare(valid))[:, 1]):.4f}")


def predict_proba(df: pd.DataFrame):
    """P(dep_delayed_15min == 'Y') for each row of a raw frame without the label column."""
    return model.predict_proba(prepare(df))[:, 1]
