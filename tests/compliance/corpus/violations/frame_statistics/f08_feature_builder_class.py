# expect: frame_statistics
# A FeatureBuilder whose transform() counts distinct destinations per origin in the frame it is given.
import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"


class FeatureBuilder:
    cats = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]

    def fit(self, df):
        self.levels = {c: sorted(df[c].unique()) for c in self.cats}
        return self

    def transform(self, df):
        X = df.drop(columns=[LABEL], errors="ignore").copy()
        X["origin_fanout"] = X.groupby("Origin")["Dest"].transform("nunique")
        X["carrier_share"] = X["UniqueCarrier"].map(X["UniqueCarrier"].value_counts()) / len(X)
        for c in self.cats:
            X[c] = pd.Categorical(X[c], categories=self.levels[c])
        return X


train = pd.read_csv("data/train.csv")
evalframe = pd.read_csv("data/eval.csv")
builder = FeatureBuilder().fit(train)
model = XGBClassifier(n_estimators=150, max_depth=6, learning_rate=0.1, enable_categorical=True, random_state=42)
model.fit(builder.transform(train), train[LABEL] == "Y")
print(f"Eval AUC: {roc_auc_score(evalframe[LABEL] == 'Y', model.predict_proba(builder.transform(evalframe))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(builder.transform(df))[:, 1]
