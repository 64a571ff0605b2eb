"""`eval_labels_in_fit` tracks the evaluation file's labels; `eval_features_in_fit` its features alone.

Small programs for each case of issue 14: the label column reaching a fit's labels, weights or training
rows (directly, through a join with training rows, a target encoding, a model fitted on it) is
`eval_labels_in_fit`; evaluation rows without their labels reaching a fit (adversarial validation,
pseudo-labels, an encoder fitted on train + eval features) is `eval_features_in_fit`; the early-stopping set
is neither.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable

import pytest

from orchestrator.compliance.audit import audit_source
from orchestrator.compliance.traces import DEFAULT_RULES, RULES_BY_NAME, eval_features_in_fit

E = "eval_labels_in_fit"
X = "eval_features_in_fit"
HEAD = """
import json
import os
import numpy as np
import pandas as pd
from sklearn.preprocessing import StandardScaler
from xgboost import XGBClassifier
TASK = json.load(open("task.json"))
TARGET = TASK["target"]
train = pd.read_csv("data/train.csv")
evald = pd.read_csv("data/eval.csv")
FEATURES = [c for c in train.columns if c != TARGET]
def to_y(df):
    return (df[TARGET] == TASK["positive_label"]).astype(int).to_numpy()
model = XGBClassifier()
"""

CASES: dict[str, tuple[str, set[str]]] = {
    "evaluation rows joined to training rows with their labels": (
        """
        full = pd.concat([train, evald], ignore_index=True)
        model.fit(full[FEATURES], to_y(full))
    """,
        {E},
    ),
    "evaluation labels appended to training labels": (
        """
        X_all = pd.concat([train[FEATURES], evald[FEATURES]])
        y_all = np.concatenate([to_y(train), to_y(evald)])
        model.fit(X_all, y_all)
    """,
        {E},
    ),
    "the evaluation labels only as the early-stopping set": (
        """
        model.fit(train[FEATURES], to_y(train), eval_set=[(evald[FEATURES], to_y(evald))])
    """,
        set(),
    ),
    "a target encoding of the evaluation labels becomes a feature": (
        """
        te = pd.Series(to_y(evald)).groupby(evald["Origin"].to_numpy()).mean()
        model.fit(train[FEATURES].assign(te=train["Origin"].map(te)), to_y(train))
    """,
        {E},
    ),
    "sample weights from the evaluation labels' balance": (
        """
        rate = to_y(evald).mean()
        y = to_y(train)
        model.fit(train[FEATURES], y, sample_weight=np.where(y == 1, rate, 1 - rate))
    """,
        {E},
    ),
    "a model fitted on the evaluation labels, stacked": (
        """
        first = XGBClassifier().fit(evald[FEATURES], to_y(evald))
        model.fit(train[FEATURES].assign(p=first.predict_proba(train[FEATURES])[:, 1]), to_y(train))
    """,
        {E},
    ),
    "adversarial validation on features with synthetic domain labels": (
        """
        Xtr, Xev = train[FEATURES], evald.drop(columns=[TARGET])
        adv = XGBClassifier().fit(pd.concat([Xtr, Xev]), np.r_[np.zeros(len(Xtr)), np.ones(len(Xev))])
        w = adv.predict_proba(Xtr)[:, 1]
        model.fit(Xtr, to_y(train), sample_weight=w / (1 - w))
    """,
        {X},
    ),
    "domain labels from the evaluation frame's shape and index": (
        """
        y_dom = pd.Series(1, index=evald.index).reindex(range(evald.shape[0]))
        XGBClassifier().fit(evald[FEATURES], y_dom)
    """,
        {X},
    ),
    "pseudo-labels predicted for the evaluation rows": (
        """
        model.fit(train[FEATURES], to_y(train))
        pseudo = model.predict(evald[FEATURES])
        XGBClassifier().fit(pd.concat([train[FEATURES], evald[FEATURES]]), np.r_[to_y(train), pseudo])
    """,
        {X},
    ),
    "a scaler fitted on train + eval features, the model on scaled training rows": (
        """
        scaler = StandardScaler().fit(pd.concat([train[FEATURES], evald[FEATURES]]))
        model.fit(scaler.transform(train[FEATURES]), to_y(train))
    """,
        {X},
    ),
    "a dict of frames keyed by tuples: only the training frame is fitted on": (
        """
        VIEWS = [(0, 1), (1, 0), (1, 1)]
        FRAMES = {v: (train[FEATURES], evald[FEATURES]) for v in VIEWS}
        for i in range(70):
            for v in VIEWS:
                XGBClassifier().fit(FRAMES[v][0], to_y(train))
    """,
        set(),
    ),
    "evaluation rows selected by a mask keep their columns apart from the label": (
        """
        half = evald[np.arange(len(evald)) % 2 == 0].reset_index(drop=True)
        XGBClassifier().fit(half[FEATURES], np.zeros(len(half)))
    """,
        {X},
    ),
    "a label column whose name is not known is taken to be the label": (
        """
        LABEL = os.environ["LABEL_COLUMN"]
        XGBClassifier().fit(evald[FEATURES], evald[LABEL])
    """,
        {E},
    ),
    "the last column by position is taken to be the label": (
        """
        XGBClassifier().fit(evald.iloc[:, :-1], evald.iloc[:, -1])
    """,
        {E},
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_eval_rules(case: str, flagged: Callable[[str], set[str]]) -> None:
    source, expected = CASES[case]
    assert flagged(HEAD + textwrap.dedent(source)) & {E, X} == expected


def test_the_label_column_name_comes_from_task_json() -> None:
    # without the settings file's content the target is not known: dropping it cannot be proved
    source = HEAD + textwrap.dedent(
        CASES["adversarial validation on features with synthetic domain labels"][0]
    )
    unknown = source.replace('json.load(open("task.json"))', "json.load(open(os.environ['TASK_FILE']))")
    assert {r.rule for r in audit_source(unknown, "t.py") if r.verdict == "flagged"} >= {E}


def test_features_rule_is_reported_but_not_in_the_default_exclusion() -> None:
    assert DEFAULT_RULES == ("eval_labels_in_fit", "frame_statistics")
    assert not RULES_BY_NAME[X].default_exclusion
    source = HEAD + textwrap.dedent(
        CASES["adversarial validation on features with synthetic domain labels"][0]
    )
    records = {r.rule: r for r in audit_source(source, "t.py")}
    assert records[X].verdict == "flagged" and records[X].rule_version == eval_features_in_fit.RULE_VERSION
    assert "features only" in records[X].evidence[0].summary
    from orchestrator.compliance.records import is_compliant

    assert is_compliant(records.values())  # reported, not excluded
    assert not is_compliant(records.values(), rules=(E, "frame_statistics", X))
