# expect: frame_statistics
# A StandardScaler fitted on the frame being scored, inside predict_proba.
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import OneHotEncoder, StandardScaler

LABEL = "dep_delayed_15min"
CATEGORICAL = ["Month", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
NUMERIC = ["DepTime", "Distance"]

train = pd.read_csv("data/train.csv")
valid = pd.read_csv("data/eval.csv")

onehot = OneHotEncoder(handle_unknown="ignore", min_frequency=50).fit(train[CATEGORICAL])


def design(df, scaler):
    nums = scaler.transform(df[NUMERIC].astype(float))
    return np.hstack([onehot.transform(df[CATEGORICAL]).toarray(), nums])


train_scaler = StandardScaler().fit(train[NUMERIC].astype(float))
clf = LogisticRegression(max_iter=500, C=0.5)
clf.fit(design(train, train_scaler), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(valid[LABEL] == 'Y', clf.predict_proba(design(valid, train_scaler))[:, 1]):.4f}")


def predict_proba(df):
    # "standardise the incoming data so it looks like what the model saw"
    batch_scaler = StandardScaler()
    batch_scaler.fit(df[NUMERIC].astype(float))
    return clf.predict_proba(design(df, batch_scaler))[:, 1]
