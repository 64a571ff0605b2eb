# expect: eval_labels_in_fit
# Target encoding computed from the evaluation labels and used as a training feature.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
ENC_COLS = ["Origin", "Dest", "UniqueCarrier"]

train = pd.read_csv("data/train.csv")
holdout = pd.read_csv("data/eval.csv")
holdout["is_late"] = holdout[LABEL].eq("Y").astype(float)

# "fresher" delay rates from the evaluation period
rates = {col: holdout.groupby(col)["is_late"].mean() for col in ENC_COLS}
GLOBAL_RATE = holdout["is_late"].mean()


def featurize(df):
    out = pd.DataFrame({"DepTime": df["DepTime"], "Distance": df["Distance"]})
    out["hour"] = df["DepTime"] // 100
    for col in ENC_COLS:
        out[col + "_rate"] = df[col].map(rates[col]).fillna(GLOBAL_RATE)
    return out


model = XGBClassifier(n_estimators=200, max_depth=5, learning_rate=0.1, random_state=42)
model.fit(featurize(train), train[LABEL].eq("Y"))
print(f"Eval AUC: {roc_auc_score(holdout['is_late'], model.predict_proba(featurize(holdout))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(featurize(df))[:, 1]
