# expect: clear
# predict_proba (re)fits its encoders on every call -- on the training frame, then applies them to the batch.
import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import LabelEncoder, MinMaxScaler
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
NUMS = ["DepTime", "Distance"]

TRAIN = pd.read_csv("data/train.csv")
EVAL = pd.read_csv("data/eval.csv")


def encode(df, reference):
    out = pd.DataFrame(index=df.index)
    for c in CATS:
        le = LabelEncoder().fit(reference[c])
        known = df[c].isin(le.classes_)
        out[c] = np.where(known, le.transform(df[c].where(known, le.classes_[0])), -1)
    scaler = MinMaxScaler().fit(reference[NUMS])
    out[NUMS] = scaler.transform(df[NUMS])
    return out


model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, random_state=42)
model.fit(encode(TRAIN, TRAIN), TRAIN[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(EVAL[LABEL] == 'Y', model.predict_proba(encode(EVAL, TRAIN))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(encode(df, TRAIN))[:, 1]
