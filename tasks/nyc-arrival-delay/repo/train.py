"""Starting code: an XGBoost regression of a New York flight's arrival delay, in minutes."""

import numpy as np
import pandas as pd
from xgboost import XGBRegressor

TARGET = "arr_delay"

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


y_train = train[TARGET].astype(float)
y_valid = valid[TARGET].astype(float)

model = XGBRegressor(
    n_estimators=30,
    max_depth=4,
    learning_rate=0.1,
    enable_categorical=True,
    random_state=42,
)
model.fit(prepare(train), y_train, eval_set=[(prepare(valid), y_valid)], verbose=False)

print(f"Eval RMSE: {float(np.sqrt(np.mean((model.predict(prepare(valid)) - y_valid) ** 2))):.4f}")


def predict(df: pd.DataFrame):
    """The predicted arrival delay in minutes for each row of a raw frame without the label column."""
    return model.predict(prepare(df))
