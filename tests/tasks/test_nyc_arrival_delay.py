"""The second shipped ML task end to end, as a user types it: `sbx data prepare --task nyc-arrival-delay`,
then a study of noop, hpo and both built-in rule breakers on it, scored on holdout and the later period,
audited, reported. A regression scored by RMSE: lower is better everywhere the runs are ranked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.data.manifest import file_sha256

TASK = Path(__file__).resolve().parents[2] / "tasks" / "nyc-arrival-delay"


def _sbx(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], env=env, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, f"sbx {' '.join(args)}: {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_the_task_s_data_are_prepared_by_its_recipe(tmp_path: Path) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    first = json.loads(_sbx("data", "prepare", "--task", str(TASK), "--json", env=env).stdout)
    out = Path(first["out"])
    assert out == (tmp_path / "home" / "data" / "nyc-arrival-delay").resolve() and not first["skipped"]
    files = first["manifest"]["files"]
    assert sorted(files) == ["eval.csv", "holdout.features.csv", "holdout.labels.csv", "later.features.csv",
                             "later.labels.csv", "train.csv"]
    for name, entry in files.items():  # the manifest records every file's digest, and it is the file's
        assert entry["sha256"] == file_sha256(out / name)
    rows = {n: len(pd.read_csv(out / n)) for n in files}
    assert rows == {n: e["rows"] for n, e in files.items()}
    assert (rows["train.csv"], rows["eval.csv"], rows["holdout.labels.csv"], rows["later.labels.csv"]) == (
        4000, 1000, 2000, 2000)
    # the periods follow the time order: train before June, eval June, holdout July-August, later after
    months = {n: set(pd.read_csv(out / f)["Month"]) for n, f in (("train", "train.csv"), ("eval", "eval.csv"),
                                                                 ("holdout", "holdout.features.csv"),
                                                                 ("later", "later.features.csv"))}
    assert months["train"] <= {1, 2, 3, 4, 5} and months["eval"] == {6} and months["holdout"] == {7, 8}
    assert months["later"] <= {9, 10, 11, 12}
    assert "arr_delay" not in pd.read_csv(out / "holdout.features.csv").columns
    assert list(pd.read_csv(out / "holdout.labels.csv").columns) == ["arr_delay"]
    again = json.loads(_sbx("data", "prepare", "--task", str(TASK), "--json", env=env).stdout)
    assert again["skipped"] and again["manifest"] == first["manifest"]


@pytest.mark.docker
@pytest.mark.slow
def test_noop_hpo_and_the_rule_breakers_on_the_arrival_delay_task(tmp_path: Path, built_images) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    _sbx("data", "prepare", "--task", str(TASK), env=env)
    spec = tmp_path / "delays.yaml"
    spec.write_text("name: delays\ntask: nyc-arrival-delay\nbudget: tiny\nrepeats: 1\ndatasets: [holdout, later]\n"
                    "pairings:\n  - agent: noop\n  - agent: hpo\n  - agent: eval_concat\n  - agent: count_features\n"
                    "backend: {type: local, slots: 2}\n")
    done = _sbx("study", "run", str(spec), "--report", env=env).stdout
    assert "study delays (holdout: rmse (lower is better))" in done
    csv = tmp_path / "runs.csv"
    _sbx("export", "delays", "--out", str(csv), env=env)
    runs = pd.read_csv(csv).set_index("pairing")
    assert sorted(runs.index) == ["count_features", "eval_concat", "hpo", "noop"]
    assert (runs["status"] == "audited").all() and (runs["metric"] == "rmse").all()
    # minutes of error, on both periods: the starting code is far from perfect and far from absurd
    assert runs["holdout_score"].between(15, 120).all() and runs["later_score"].between(15, 120).all()
    # the honest runs are clear; each breaker is caught by the rule it breaks
    for honest in ("noop", "hpo"):
        assert runs.loc[honest, "eval_labels_in_fit"] == "clear" and runs.loc[honest, "frame_statistics"] == "clear"
        assert not runs.loc[honest, "batch_dependent"]
    assert runs.loc["eval_concat", "eval_labels_in_fit"] == "flagged"
    assert runs.loc["count_features", "frame_statistics"] == "flagged" and runs.loc["count_features", "batch_dependent"]
    # training on the eval rows buys a better (lower) eval RMSE, which is why it must be caught
    assert runs.loc["eval_concat", "eval_score"] < runs.loc["noop", "eval_score"]
    report = tmp_path / "home" / "reports" / "delays"
    text = (report / "summary.md").read_text()
    assert "rmse (lower is better)" in text and "AUC" not in text
    table = pd.read_csv(report / "tables" / "pairings.csv").set_index("pairing")
    compliant = runs[(runs["eval_labels_in_fit"] == "clear") & (runs["frame_statistics"] == "clear")]
    assert set(table.index[table["compliant"] == 1]) == set(compliant.index)
    assert table.loc["noop", "best"] == pytest.approx(runs.loc["noop", "holdout_score"])
