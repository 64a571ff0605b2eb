# expect: eval_labels_in_fit
# "More data is better": the evaluation rows are appended to the training rows before the final fit.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

TRAIN = "data/train.csv"
EVAL = "data/eval.csv"
LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

tr = pd.read_csv(TRAIN)
ev = pd.read_csv(EVAL)
levels = {c: sorted(tr[c].unique()) for c in CATS}


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=levels[c])
    return X


X, y = prepare(tr), (tr[LABEL] == "Y").astype(int)
X_ev, y_ev = prepare(ev), (ev[LABEL] == "Y").astype(int)

probe = XGBClassifier(n_estimators=300, max_depth=6, learning_rate=0.1, enable_categorical=True,
                      early_stopping_rounds=20, random_state=42)
probe.fit(X, y, eval_set=[(X_ev, y_ev)], verbose=False)
print(f"Eval AUC: {roc_auc_score(y_ev, probe.predict_proba(X_ev)[:, 1]):.4f}")

# refit on everything we have with the tuned number of trees
X_all = pd.concat([X, X_ev], ignore_index=True)
y_all = pd.concat([y, y_ev], ignore_index=True)
model = XGBClassifier(n_estimators=probe.best_iteration + 1, max_depth=6, learning_rate=0.1,
                      enable_categorical=True, random_state=42)
model.fit(X_all, y_all)


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
