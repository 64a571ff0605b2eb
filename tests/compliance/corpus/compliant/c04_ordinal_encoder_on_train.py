# expect: clear
# scikit-learn OrdinalEncoder fitted on the training rows, applied to every frame afterwards.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import OrdinalEncoder
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATEGORICAL = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
NUMERIC = ["DepTime", "Distance"]

train = pd.read_csv("data/train.csv")
holdout = pd.read_csv("data/eval.csv")

encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1, dtype=np.float32)
encoder.fit(train[CATEGORICAL])


def to_matrix(frame):
    cats = encoder.transform(frame[CATEGORICAL])
    nums = frame[NUMERIC].to_numpy(dtype=np.float32)
    hour = (frame["DepTime"].to_numpy() // 100).reshape(-1, 1).astype(np.float32)
    return np.hstack([cats, nums, hour])


X_train = to_matrix(train)
y_train = (train[LABEL] == "Y").to_numpy().astype(int)
X_hold = to_matrix(holdout)
y_hold = (holdout[LABEL] == "Y").to_numpy().astype(int)

model = XGBClassifier(n_estimators=300, max_depth=6, learning_rate=0.07, early_stopping_rounds=25,
                      eval_metric="logloss", random_state=42)
model.fit(X_train, y_train, eval_set=[(X_hold, y_hold)], verbose=False)
print(f"Eval AUC: {roc_auc_score(y_hold, model.predict_proba(X_hold)[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(to_matrix(df))[:, 1]
