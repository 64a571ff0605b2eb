# expect: frame_statistics
# Percentile ranks and quantile bins computed on whatever frame is passed in.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]


def engineer(frame, levels):
    feats = frame.drop(columns=[LABEL], errors="ignore").copy()
    feats["dep_pct"] = feats["DepTime"].rank(pct=True)
    feats["dist_decile"] = pd.qcut(feats["Distance"], q=10, labels=False, duplicates="drop")
    for c in CATS:
        feats[c] = pd.Categorical(feats[c], categories=levels[c])
    return feats


train = pd.read_csv("data/train.csv")
test = pd.read_csv("data/eval.csv")
LEVELS = {c: sorted(train[c].unique()) for c in CATS}

model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(engineer(train, LEVELS), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(test[LABEL] == 'Y', model.predict_proba(engineer(test, LEVELS))[:, 1]):.4f}")

predict_proba = lambda df: model.predict_proba(engineer(df, LEVELS))[:, 1]  # noqa: E731
