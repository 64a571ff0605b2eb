# expect: clear
# A scikit-learn Pipeline: one-hot and scaling fitted inside pipe.fit on the training rows only.
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

LABEL = "dep_delayed_15min"
CATEGORICAL = ["Month", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
NUMERIC = ["DepTime", "Distance", "hour"]


def with_hour(df):
    return df.assign(hour=df["DepTime"] // 100)


preprocess = ColumnTransformer(
    [
        ("cat", OneHotEncoder(handle_unknown="ignore", min_frequency=20, sparse_output=False), CATEGORICAL),
        ("num", StandardScaler(), NUMERIC),
    ]
)
pipe = Pipeline([("prep", preprocess), ("gbm", HistGradientBoostingClassifier(max_iter=200, random_state=42))])

train = with_hour(pd.read_csv("data/train.csv"))
test = with_hour(pd.read_csv("data/eval.csv"))
pipe.fit(train[CATEGORICAL + NUMERIC], train[LABEL] == "Y")
auc = roc_auc_score(test[LABEL] == "Y", pipe.predict_proba(test[CATEGORICAL + NUMERIC])[:, 1])
print(f"Eval AUC: {auc:.4f}")


def predict_proba(df):
    frame = with_hour(df)
    return np.asarray(pipe.predict_proba(frame[CATEGORICAL + NUMERIC])[:, 1], dtype=float)
