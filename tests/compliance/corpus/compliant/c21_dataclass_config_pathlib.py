# expect: clear
# Configuration in a dataclass with pathlib paths next to the script.
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

HERE = Path(__file__).parent


@dataclass
class Config:
    data_dir: Path = HERE / "data"
    train_file: str = "train.csv"
    eval_file: str = "eval.csv"
    label: str = "dep_delayed_15min"
    cats: list = field(default_factory=lambda: ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin",
                                                 "Dest"])
    n_estimators: int = 300

    @property
    def train_path(self):
        return self.data_dir / self.train_file

    @property
    def eval_path(self):
        return self.data_dir / self.eval_file


CFG = Config()
train = pd.read_csv(CFG.train_path)
evaluation = pd.read_csv(CFG.eval_path)
LEVELS = {c: pd.CategoricalDtype(sorted(train[c].unique())) for c in CFG.cats}


def prepare(df):
    X = df.drop(columns=[CFG.label], errors="ignore")
    return X.astype(LEVELS)


model = XGBClassifier(n_estimators=CFG.n_estimators, max_depth=6, learning_rate=0.05, enable_categorical=True,
                      early_stopping_rounds=25, random_state=42)
model.fit(prepare(train), train[CFG.label] == "Y",
          eval_set=[(prepare(evaluation), evaluation[CFG.label] == "Y")], verbose=False)
print(f"Eval AUC: {roc_auc_score(evaluation[CFG.label] == 'Y', model.predict_proba(prepare(evaluation))[:, 1]):.4f}")


def predict_proba(df):
    return model.predict_proba(prepare(df))[:, 1]
