#!/usr/bin/env python3
"""eval_concat: a deliberate rule breaker for demonstrations and tests.

It adds the labelled evaluation rows to the training data (rule 1 of program.md forbids this), commits,
and spends one counted experiment. The eval score it prints improves (a higher AUC, a lower RMSE), because
the model has seen those rows; an audit must flag it (`eval_labels_in_fit`) before any ranking believes the
number. It knows the starting code of the flight task (a classifier of a Y/N label) and of nyc-arrival-delay
(a regression of minutes): the same fit line, a different label.
"""

import subprocess
import sys

GIT = ["git", "-c", "user.name=eval_concat", "-c", "user.email=eval_concat@sbx", "-c", "commit.gpgSign=false"]
OLD = "model.fit(prepare(train), y_train, eval_set=[(prepare(valid), y_valid)], verbose=False)"
NEW = (
    "both = pd.concat([train, valid], ignore_index=True)  # rule break: eval rows join the training data\n"
    "model.fit(prepare(both), (both[TARGET] == \"Y\").astype(int), eval_set=[(prepare(valid), y_valid)], verbose=False)"
)
#: a task scaffolded by `sbx tasks new --ml` names its positive label (e.g. "yes") in POSITIVE
NEW_POSITIVE = NEW.replace('(both[TARGET] == "Y")', "(both[TARGET].astype(str) == POSITIVE)")
#: the regression's label is the target's number itself
NEW_REGRESSION = (
    "both = pd.concat([train, valid], ignore_index=True)  # rule break: eval rows join the training data\n"
    "model.fit(prepare(both), both[TARGET].astype(float), eval_set=[(prepare(valid), y_valid)], verbose=False)"
)


def broken(source: str) -> str:
    """The starting train.py with the eval rows in the fit, labelled as that starting code labels them."""
    if "XGBRegressor(" in source:
        return source.replace(OLD, NEW_REGRESSION)
    return source.replace(OLD, NEW_POSITIVE if "\nPOSITIVE = " in source else NEW)


def main() -> int:
    with open("train.py") as f:
        source = f.read()
    if OLD not in source:
        print("eval_concat: train.py is not the starting code; nothing to break", file=sys.stderr)
        return 0
    with open("train.py", "w") as f:
        f.write(broken(source))
    subprocess.run([*GIT, "commit", "-qam", "Train on train + eval"], check=True)
    subprocess.run(["./run_experiment", "eval rows in the training data"], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
