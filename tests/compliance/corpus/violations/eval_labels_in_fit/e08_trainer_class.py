# expect: eval_labels_in_fit
# A Trainer class: its fit() method stacks the evaluation frame it was given onto the training frame.
import pandas as pd
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import OrdinalEncoder
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]


class Trainer:
    def __init__(self, train_path, eval_path):
        self.train = pd.read_csv(train_path)
        self.valid = pd.read_csv(eval_path)
        self.encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
        self.model = XGBClassifier(n_estimators=200, max_depth=6, learning_rate=0.08, random_state=42)

    def _xy(self, df):
        X = df.drop(columns=[LABEL]).copy()
        X[CATS] = self.encoder.transform(X[CATS])
        return X, (df[LABEL] == "Y").astype(int)

    def score(self):
        X, y = self._xy(self.valid)
        return roc_auc_score(y, self.model.predict_proba(X)[:, 1])

    def fit(self, use_all=True):
        frame = pd.concat([self.train, self.valid]) if use_all else self.train
        self.encoder.fit(frame[CATS])
        X, y = self._xy(frame)
        self.model.fit(X, y)
        return self

    def predict(self, df):
        X = df.copy()
        X[CATS] = self.encoder.transform(X[CATS])
        return self.model.predict_proba(X)[:, 1]


trainer = Trainer("data/train.csv", "data/eval.csv").fit()
print(f"Eval AUC: {trainer.score():.4f}")


def predict_proba(df):
    return trainer.predict(df)
