"""The audit's view of a task follows its spec (run/audit.py: task_layout): the contract's prediction function,
its target, the batch's columns from the prepared train.csv. The flight task's is the traces' default layout,
field for field, so its audit verdicts are what they were."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.compliance.repo import audit_repo
from orchestrator.compliance.strings import TaskLayout
from orchestrator.data.recipe import prepare_recipe
from orchestrator.run.audit import task_layout
from orchestrator.specs import load_task
from orchestrator.specs.datarecipe import load_recipe

NYC = Path(__file__).resolve().parents[2] / "tasks" / "nyc-arrival-delay"


def test_the_flight_task_s_layout_is_the_default(small_flight_data: Path) -> None:
    assert task_layout(load_task("flight-delays"), small_flight_data) == TaskLayout()
    assert task_layout(load_task("flight-delays"), None) == TaskLayout()


def test_the_regression_task_s_layout_and_a_batch_statistic_in_its_predict(tmp_path: Path) -> None:
    task = load_task(NYC)
    out = tmp_path / "nyc"
    prepare_recipe(load_recipe(NYC / "data.yaml"), NYC, out)
    layout = task_layout(task, out)
    assert (layout.entry, layout.target) == ("predict", "arr_delay")
    assert layout.batch_columns == ("Month", "DayofMonth", "DepTime", "ArrTime", "UniqueCarrier", "Origin", "Dest",
                                    "Distance")
    assert json.loads(dict(layout.json_files)["task.json"])["target"] == "arr_delay"
    start = (NYC / "repo" / "train.py").read_text()
    statistic = start.replace('    X = df.drop(columns=[TARGET], errors="ignore").copy()\n',
                              '    X = df.drop(columns=[TARGET], errors="ignore").copy()\n'
                              '    X["day_n"] = X.groupby(["Month", "DayofMonth"])["Dest"].transform("size")\n')
    concat = start.replace("model.fit(prepare(train), y_train,",
                           "both = pd.concat([train, valid])\nmodel.fit(prepare(both), both[TARGET],")
    verdicts = {name: {r.rule: r.verdict for r in audit_repo({"train.py": src.encode()}, layout=layout)}
                for name, src in (("start", start), ("statistic", statistic), ("concat", concat))}
    assert verdicts["start"]["frame_statistics"] == "clear" and verdicts["start"]["eval_labels_in_fit"] == "clear"
    assert verdicts["statistic"]["frame_statistics"] == "flagged"
    assert verdicts["concat"]["eval_labels_in_fit"] == "flagged"
    # under the flight layout the regression's `predict` is not the scorer's function: not seen as one
    default = {r.rule: r.verdict for r in audit_repo({"train.py": statistic.encode()})}
    assert default["frame_statistics"] != "flagged"
