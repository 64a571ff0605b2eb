# expect: clear
# Native xgboost API: training DMatrix from train.csv, eval DMatrix only in `evals` for early stopping.
import pandas as pd
import xgboost as xgb
from sklearn.metrics import roc_auc_score

DATA_DIR = "data"
TARGET = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]


def read(name):
    return pd.read_csv(f"{DATA_DIR}/{name}.csv")


trn = read("train")
val = read("eval")
cat_types = {c: pd.CategoricalDtype(sorted(trn[c].unique())) for c in CATS}


def featurize(frame):
    feats = frame[[c for c in frame.columns if c != TARGET]].copy()
    feats["hour"] = feats["DepTime"] // 100
    feats["is_evening"] = (feats["hour"] >= 17).astype(int)
    for c in CATS:
        feats[c] = feats[c].astype(cat_types[c])
    return feats


dtrain = xgb.DMatrix(featurize(trn), label=(trn[TARGET] == "Y").astype(int), enable_categorical=True)
dvalid = xgb.DMatrix(featurize(val), label=(val[TARGET] == "Y").astype(int), enable_categorical=True)

params = {
    "objective": "binary:logistic",
    "eval_metric": "auc",
    "max_depth": 6,
    "eta": 0.08,
    "subsample": 0.9,
    "colsample_bytree": 0.8,
    "seed": 42,
}
booster = xgb.train(
    params,
    dtrain,
    num_boost_round=500,
    evals=[(dtrain, "train"), (dvalid, "eval")],
    early_stopping_rounds=30,
    verbose_eval=False,
)
best_range = (0, booster.best_iteration + 1)
valid_pred = booster.predict(dvalid, iteration_range=best_range)
print(f"Eval AUC: {roc_auc_score(dvalid.get_label(), valid_pred):.4f}")


def predict_proba(df):
    dm = xgb.DMatrix(featurize(df), enable_categorical=True)
    return booster.predict(dm, iteration_range=best_range)
