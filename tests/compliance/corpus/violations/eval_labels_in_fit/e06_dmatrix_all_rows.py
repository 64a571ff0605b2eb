# expect: eval_labels_in_fit
# Native API: after early stopping, a second booster is trained on a DMatrix stacking both files.
import numpy as np
import pandas as pd
import xgboost as xgb
from sklearn.metrics import roc_auc_score

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv("data/train.csv")
evalset = pd.read_csv("data/eval.csv")
codes = {c: {v: i for i, v in enumerate(sorted(train[c].unique()))} for c in CATS}


def matrix(df):
    cols = [df[c].map(codes[c]).fillna(-1).to_numpy() for c in CATS]
    cols += [df["DepTime"].to_numpy(), df["Distance"].to_numpy()]
    return np.column_stack(cols).astype(np.float32)


Xt, yt = matrix(train), (train[LABEL] == "Y").to_numpy(dtype=np.float32)
Xe, ye = matrix(evalset), (evalset[LABEL] == "Y").to_numpy(dtype=np.float32)
params = {"objective": "binary:logistic", "eval_metric": "auc", "max_depth": 6, "eta": 0.1}

dtrain = xgb.DMatrix(Xt, label=yt)
deval = xgb.DMatrix(Xe, label=ye)
first = xgb.train(params, dtrain, 400, evals=[(deval, "eval")], early_stopping_rounds=25, verbose_eval=False)
print(f"Eval AUC: {roc_auc_score(ye, first.predict(deval)):.4f}")

dall = xgb.DMatrix(np.vstack([Xt, Xe]), label=np.concatenate([yt, ye]))
booster = xgb.train(params, dall, num_boost_round=first.best_iteration + 1)


def predict_proba(df):
    return booster.predict(xgb.DMatrix(matrix(df)))
