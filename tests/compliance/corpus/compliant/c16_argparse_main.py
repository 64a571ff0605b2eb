# expect: clear
# A script with argparse and main(); the evaluation path is an option used for early stopping only.
import argparse

import pandas as pd
from sklearn.metrics import roc_auc_score
from xgboost import XGBClassifier

LABEL = "dep_delayed_15min"
CATS = ["Month", "DayofMonth", "DayOfWeek", "UniqueCarrier", "Origin", "Dest"]
STATE = {}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="flight delay model")
    parser.add_argument("--train", default="data/train.csv")
    parser.add_argument("--eval-path", default="data/eval.csv")
    parser.add_argument("--trees", type=int, default=300)
    args, _ = parser.parse_known_args(argv)
    return args


def prepare(df):
    X = df.drop(columns=[LABEL], errors="ignore").copy()
    for c in CATS:
        X[c] = pd.Categorical(X[c], categories=STATE["levels"][c])
    return X


def main(argv=None):
    args = parse_args(argv)
    train = pd.read_csv(args.train)
    holdout = pd.read_csv(args.eval_path)
    STATE["levels"] = {c: sorted(train[c].unique()) for c in CATS}
    model = XGBClassifier(n_estimators=args.trees, max_depth=6, learning_rate=0.05, enable_categorical=True,
                          early_stopping_rounds=30, random_state=42)
    model.fit(prepare(train), train[LABEL] == "Y", eval_set=[(prepare(holdout), holdout[LABEL] == "Y")],
              verbose=False)
    STATE["model"] = model
    print(f"Eval AUC: {roc_auc_score(holdout[LABEL] == 'Y', model.predict_proba(prepare(holdout))[:, 1]):.4f}")


def predict_proba(df):
    if "model" not in STATE:
        main([])
    return STATE["model"].predict_proba(prepare(df))[:, 1]


if __name__ == "__main__":
    main()
