# expect: clear
# String columns cast with astype("category") in every frame. The batch's level set differs from training,
# but xgboost (3.1+) stores the training categories and re-codes by value, so predictions do not depend on
# which other rows are in the batch.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    X[CATS] = X[CATS].astype("category")
    X["hour"] = X["DepTime"] // 100
    return X


train = pd.read_csv("data/train.csv")
evaluation = pd.read_csv("data/eval.csv")
model = XGBClassifier(n_estimators=200, max_depth=6, learning_rate=0.08, enable_categorical=True,
                      max_cat_to_onehot=1, early_stopping_rounds=20, random_state=42)
model.fit(prepare(train), train[LABEL] == "Y", eval_set=[(prepare(evaluation), evaluation[LABEL] == "Y")],
          verbose=False)
print(f"Eval AUC: {roc_auc_score(evaluation[LABEL] == 'Y', model.predict_proba(prepare(evaluation))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
