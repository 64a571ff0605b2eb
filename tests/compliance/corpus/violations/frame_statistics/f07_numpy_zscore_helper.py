# expect: frame_statistics
# Numeric columns standardised by a small numpy helper using the mean and std of its input.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import OrdinalEncoder
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
NUMS = ["DepTime", "Distance"]


def zscore(values):
    arr = np.asarray(values, dtype=float)
    mu, sigma = arr.mean(axis=0), arr.std(axis=0)
    return (arr - mu) / np.where(sigma == 0, 1.0, sigma)


train = pd.read_csv("data/train.csv")
holdout = pd.read_csv("data/eval.csv")
enc = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1).fit(train[CATS])


def matrix(df):
    return np.column_stack([enc.transform(df[CATS]), zscore(df[NUMS].to_numpy())])


model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, random_state=42)
model.fit(matrix(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(holdout[LABEL] == 'Y', model.predict_proba(matrix(holdout))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(matrix(df))[:, 1]
