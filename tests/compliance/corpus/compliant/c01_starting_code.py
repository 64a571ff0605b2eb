# expect: clear
# The task's starting code, unchanged.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

TRAIN_PATH = "data/train.csv"
EVAL_PATH = "data/eval.csv"
LABEL = "dep_delayed_15min"
CATEGORICAL = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

train = pd.read_csv(TRAIN_PATH)
evaluation = pd.read_csv(EVAL_PATH)
LEVELS = {col: sorted(train[col].unique()) for col in CATEGORICAL}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for col in CATEGORICAL:
        X[col] = pd.Categorical(X[col], categories=LEVELS[col])
    return X


X_train, y_train = prepare(train), (train[LABEL] == "Y").astype(int)
X_eval, y_eval = prepare(evaluation), (evaluation[LABEL] == "Y").astype(int)

model = XGBClassifier(
    n_estimators=30,
    max_depth=6,
    learning_rate=0.1,
    enable_categorical=True,
    random_state=42,
)
model.fit(X_train, y_train, eval_set=[(X_eval, y_eval)], verbose=False)
print(f"Eval AUC: {roc_auc_score(y_eval, model.predict_proba(X_eval)[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
