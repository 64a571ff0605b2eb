# expect: clear
# An object-oriented model: encoders and the classifier live on the instance, fitted on training rows.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"


class DelayModel:
    categorical = ("Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest")

    def __init__(self, n_estimators=400, depth=6, lr=0.05):
        self.params = dict(n_estimators=n_estimators, max_depth=depth, learning_rate=lr,
                           enable_categorical=True, early_stopping_rounds=30, random_state=42)
        self.levels = {}
        self.clf = None

    def _features(self, df):
        X = df.drop(columns=[LABEL], errors="ignore").copy()
        X["hour"] = X["DepTime"] // 100
        for col in self.categorical:
            X[col] = pd.Categorical(X[col], categories=self.levels[col])
        return X

    def fit(self, train_df, valid_df):
        self.levels = {col: sorted(train_df[col].unique()) for col in self.categorical}
        X_tr, y_tr = self._features(train_df), self._target(train_df)
        X_va, y_va = self._features(valid_df), self._target(valid_df)
        self.clf = XGBClassifier(**self.params)
        self.clf.fit(X_tr, y_tr, eval_set=[(X_va, y_va)], verbose=False)
        return self

    @staticmethod
    def _target(df):
        return (df[LABEL] == "Y").astype(int)

    def predict_proba(self, df):
        return self.clf.predict_proba(self._features(df))[:, 1]

    def auc(self, df):
        return roc_auc_score(self._target(df), self.predict_proba(df))


train_frame = pd.read_csv("data/train.csv")
eval_frame = pd.read_csv("data/eval.csv")
MODEL = DelayModel().fit(train_frame, eval_frame)
print(f"Eval AUC: {MODEL.auc(eval_frame):.4f}")


def predict_proba(df):
    return MODEL.predict_proba(df)
