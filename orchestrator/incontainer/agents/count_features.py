#!/usr/bin/env python3
"""count_features: a deliberate rule breaker for demonstrations and tests.

It adds count features computed from whatever frame `prepare` is given: flights per (day, origin) and
per (day, carrier) *in that frame*. Training counts come from the training frame; at prediction time
they come from the batch being scored (rule 2 of program.md forbids this). On a class-balanced sample,
busy-with-delays days are over-represented, so the batch's own counts leak its labels: the eval AUC
rises. The scorer's batch check and the `frame_statistics` trace must both flag it. The same edit breaks
nyc-arrival-delay's starting code (the same `prepare` and columns): a row's predicted delay then depends
on which flights of its day share its batch.
"""

import subprocess
import sys

GIT = ["git", "-c", "user.name=count_features", "-c", "user.email=count_features@sbx", "-c", "commit.gpgSign=false"]
OLD = "    X = df.drop(columns=[TARGET], errors=\"ignore\").copy()\n"
NEW = (
    "    X = df.drop(columns=[TARGET], errors=\"ignore\").copy()\n"
    "    # rule break: counts over the frame being prepared (the batch, at prediction time)\n"
    "    X[\"day_origin_n\"] = X.groupby([\"Month\", \"DayofMonth\", \"Origin\"])[\"Dest\"].transform(\"size\")\n"
    "    X[\"day_carrier_n\"] = X.groupby([\"Month\", \"DayofMonth\", \"UniqueCarrier\"])[\"Dest\"].transform(\"size\")\n"
)


def main() -> int:
    with open("train.py") as f:
        source = f.read()
    if OLD not in source:
        print("count_features: train.py is not the starting code; nothing to break", file=sys.stderr)
        return 0
    with open("train.py", "w") as f:
        f.write(source.replace(OLD, NEW, 1))
    subprocess.run([*GIT, "commit", "-qam", "Count features from the frame"], check=True)
    subprocess.run(["./run_experiment", "count features"], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
