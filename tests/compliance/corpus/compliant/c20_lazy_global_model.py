# expect: clear
# The model is trained lazily on first use and cached in a module global.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
_MODEL = None
_LEVELS = None


def _prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=_LEVELS[c])
    return X


def _train():
    global _MODEL, _LEVELS
    train = pd.read_csv("data/train.csv")
    valid = pd.read_csv("data/eval.csv")
    _LEVELS = {c: sorted(train[c].unique()) for c in CATS}
    model = XGBClassifier(n_estimators=300, max_depth=6, learning_rate=0.06, enable_categorical=True,
                          early_stopping_rounds=25, random_state=42)
    model.fit(_prepare(train), train[LABEL] == "Y", eval_set=[(_prepare(valid), valid[LABEL] == "Y")],
              verbose=False)
    _MODEL = model
    auc = roc_auc_score(valid[LABEL] == "Y", model.predict_proba(_prepare(valid))[:, 1])
    print(f"Eval AUC: {auc:.4f}")
    return model


def _get_model():
    if _MODEL is None:
        return _train()
    return _MODEL


def predict_proba(df):
    model = _get_model()
    return model.predict_proba(_prepare(df))[:, 1]


_get_model()
