"""`sbx tasks new NAME --ml`: a new ML task bundle from a table of the user's (CSV or Parquet).

It writes, under the tasks folder:

    NAME/task.yaml         target, task type, metric, prediction contract, the data set's files
    NAME/data.yaml         the data recipe: the source file (copied into the bundle, pinned by sha256), the
                           columns, the split (a time column with cut dates, or a seeded stratified split)
    NAME/source/FILE       the user's file, as given
    NAME/repo/train.py     starting code an agent can improve: XGBoost, the contract's function, its eval line
    NAME/repo/program.md   the agent's instructions: the data, the rules, the contract
    NAME/repo/run_experiment  the counted-experiment client (the same program as the shipped tasks')

Nothing is guessed silently: the task type is given; a binary task names its positive label and the other
value is the negative one; a multiclass task's classes are the target's values, sorted (predict_proba's
column order). Then `sbx data prepare --task NAME` writes the split files and `sbx run --task NAME` runs.
"""

from __future__ import annotations

import json
import shutil
import string
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pandas as pd
import yaml

from orchestrator.data.manifest import file_sha256
from orchestrator.failures import ConfigError
from orchestrator.specs.datarecipe import RECIPE_FILE, DataRecipe, FileTable, StratifiedSplit, TimeSplit
from orchestrator.specs.tasktypes import METRICS, default_metric, metric_info

#: at most this many label values make a multiclass task (more is a regression or an id)
MAX_CLASSES = 50


@dataclass(frozen=True)
class MlTaskRequest:
    name: str
    data: Path
    target: str
    task_type: str
    metric: str = ""
    positive_label: str | None = None
    #: a time split: the column and three cut dates (eval, holdout, later begin); else a stratified split
    time_column: str | None = None
    cuts: tuple[date, date, date] | None = None
    until: date | None = None
    fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)
    seed: int = 0
    rows: dict[str, int] | None = None
    #: feature columns (default: every column but the target and the time column)
    features: tuple[str, ...] | None = None
    description: str = ""


def _eval_label(metric: str) -> str:
    return metric.upper()


def eval_line(metric: str) -> str:
    """The eval line's pattern: `Eval RMSE: 12.34` (R² and log losses may print any sign)."""
    return rf"Eval {_eval_label(metric)}:\s*(-?[0-9]*\.?[0-9]+)"


#: the counted-experiment client of a task scored by `metric` ($label, $key, $higher filled in)
_RUN_EXPERIMENT = string.Template('''#!/usr/bin/env python3
"""Run one counted experiment: `python train.py` with the time limit, its eval $label recorded.

Inside an sbx sandbox this is a thin client: the count, the time limit and the record live on the host,
reached through the socket named by SBX_EXPERIMENT_SOCKET. Outside a sandbox (no socket) it runs
train.py directly, uncounted, so the repo also works on a laptop.
"""

import json
import os
import re
import socket
import subprocess
import sys
import time

EVAL_LINE = re.compile(r"Eval $label:\\s*(-?[0-9]*\\.?[0-9]+)")


def via_host(path: str, note: str) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(json.dumps({"op": "run", "note": note}).encode() + b"\\n")
        data = b""
        while not data.endswith(b"\\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data or b'{"status": "refused", "reason": "the experiment service closed the connection"}')


def direct(timeout_s: float) -> dict:
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "train.py"], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return {"status": "timeout", "seconds": time.monotonic() - start, "output_tail": out[-2000:]}
    m = EVAL_LINE.search(proc.stdout)
    return {
        "status": "ok" if proc.returncode == 0 else "crash",
        "eval_$key": float(m.group(1)) if m else None,
        "eval_score": float(m.group(1)) if m else None,
        "higher_is_better": $higher,
        "seconds": round(time.monotonic() - start, 2),
        "output_tail": (proc.stdout + proc.stderr)[-2000:],
    }


def main() -> int:
    note = " ".join(sys.argv[1:])
    sock = os.environ.get("SBX_EXPERIMENT_SOCKET")
    if sock:
        try:
            result = via_host(sock, note)
        except OSError as exc:
            print(f"run_experiment: the experiment service is unreachable ({exc}); nothing was run", file=sys.stderr)
            return 3
    else:
        result = direct(float(os.environ.get("SBX_EXPERIMENT_TIMEOUT_S", "120")))
    tail = result.pop("output_tail", "")
    if tail:
        print(tail.rstrip())
    print("EXPERIMENT " + json.dumps(result, sort_keys=True))
    return 0 if result.get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
''')


def run_experiment_text(metric: str) -> str:
    """The run_experiment of a task scored by `metric` (nyc-arrival-delay's is this for rmse)."""
    info = next(m for known in METRICS.values() for name, m in known.items() if name == metric)
    return _RUN_EXPERIMENT.substitute(label=_eval_label(metric), key=metric, higher=str(info.higher_is_better))


#: sklearn's computation of each metric in the starting code's eval line (y: labels, p: the prediction)
_EVAL_CODE = {
    ("regression", "rmse"): "float(np.sqrt(np.mean((p - y) ** 2)))",
    ("regression", "mae"): "float(np.mean(np.abs(p - y)))",
    ("regression", "r2"): "float(1 - np.sum((y - p) ** 2) / np.sum((y - np.mean(y)) ** 2))",
    ("binary", "auc"): "roc_auc_score(y, p)",
    ("binary", "ap"): "average_precision_score(y, p)",
    ("binary", "log_loss"): "log_loss(y, np.clip(p, 1e-15, 1 - 1e-15), labels=[0, 1])",
    ("binary", "brier"): "float(np.mean((p - y) ** 2))",
    ("binary", "accuracy"): "float(np.mean((p >= 0.5) == y))",
    ("multiclass", "log_loss"): "log_loss(y, p, labels=list(range(len(CLASSES))))",
    ("multiclass", "accuracy"): "float(np.mean(p.argmax(axis=1) == y))",
    ("multiclass", "macro_f1"): "f1_score(y, p.argmax(axis=1), average='macro', labels=list(range(len(CLASSES))))",
}

_TRAIN = string.Template('''"""Starting code: an XGBoost model of `$target` ($task_type), scored by $metric ($direction is better)."""

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, f1_score, log_loss, roc_auc_score  # noqa: F401
from xgboost import $model

TARGET = "$target"
$labels
train = pd.read_csv("data/train.csv")
valid = pd.read_csv("data/eval.csv")

CATEGORICAL = [c for c in train.columns if c != TARGET and not pd.api.types.is_numeric_dtype(train[c])]
LEVELS = {c: pd.Index(sorted(train[c].astype(str).unique())) for c in CATEGORICAL}


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """Features for the model: string columns become categoricals with the levels seen in training
    (a level never seen in training becomes missing)."""
    X = df.drop(columns=[TARGET], errors="ignore").copy()
    for c in CATEGORICAL:
        codes = LEVELS[c].get_indexer(X[c].astype(str))
        X[c] = pd.Categorical.from_codes(codes, categories=LEVELS[c])
    return X


y_train = $encode_train
y_valid = $encode_valid

model = $model(
    n_estimators=30,
    max_depth=4,
    learning_rate=0.1,
    enable_categorical=True,
    random_state=42,
)
model.fit(prepare(train), y_train, eval_set=[(prepare(valid), y_valid)], verbose=False)

y, p = y_valid.to_numpy(), $predict_valid
print(f"Eval $label: {$eval_code:.4f}")


def $fn(df: pd.DataFrame):
    """$doc"""
    return $predict_df
''')


def train_text(target: str, task_type: str, metric: str, *, positive: str | None = None,
               classes: tuple[str, ...] = ()) -> str:
    """The starting train.py of a new task: XGBoost on the raw columns, the contract's function, its eval line."""
    info = metric_info(task_type, metric)
    common = {"target": target, "task_type": task_type, "metric": metric, "direction": info.direction,
              "label": _eval_label(metric), "eval_code": _EVAL_CODE[(task_type, metric)]}
    if task_type == "regression":
        return _TRAIN.substitute(
            common, model="XGBRegressor", labels="", encode_train="train[TARGET].astype(float)",
            encode_valid="valid[TARGET].astype(float)", predict_valid="model.predict(prepare(valid))",
            fn="predict", doc="The predicted target for each row of a raw frame without the label column.",
            predict_df="model.predict(prepare(df))")
    if task_type == "binary":
        return _TRAIN.substitute(
            common, model="XGBClassifier", labels=f"POSITIVE = {json.dumps(positive)}\n",
            encode_train="(train[TARGET].astype(str) == POSITIVE).astype(int)",
            encode_valid="(valid[TARGET].astype(str) == POSITIVE).astype(int)",
            predict_valid="model.predict_proba(prepare(valid))[:, 1]", fn="predict_proba",
            doc="P(target == POSITIVE) for each row of a raw frame without the label column.",
            predict_df="model.predict_proba(prepare(df))[:, 1]")
    return _TRAIN.substitute(
        common, model="XGBClassifier", labels=f"CLASSES = {json.dumps(list(classes))}  # predict_proba's columns\n",
        encode_train="train[TARGET].astype(str).map({c: i for i, c in enumerate(CLASSES)})",
        encode_valid="valid[TARGET].astype(str).map({c: i for i, c in enumerate(CLASSES)})",
        predict_valid="model.predict_proba(prepare(valid))", fn="predict_proba",
        doc="One probability per class of CLASSES (in that order) for each row of a raw frame without the label.",
        predict_df="model.predict_proba(prepare(df))")


def _program(req: MlTaskRequest, metric: str, features: list[str], classes: tuple[str, ...],
             positive: str | None, fn: str) -> str:
    info = metric_info(req.task_type, metric)
    what = {"regression": f"`{req.target}` (a number)",
            "binary": f"whether `{req.target}` is `{positive}`",
            "multiclass": f"`{req.target}`, one of {', '.join(f'`{c}`' for c in classes)}"}[req.task_type]
    returns = {"regression": "a 1-D numpy array of predictions, one finite number a row",
               "binary": f"a 1-D numpy array of P({req.target} = {positive})",
               "multiclass": f"an (n, {len(classes)}) numpy array of class probabilities, columns in the order "
                             f"{', '.join(classes)}, each row summing to 1"}[req.task_type]
    split = (f"split by `{req.time_column}`: data/eval.csv is a later period than data/train.csv, and the "
             "hidden holdout later still" if req.time_column else
             "a seeded random split: data/train.csv, data/eval.csv and the hidden holdout are disjoint")
    return f"""# Improve the {req.name} model

Your job: make `train.py` predict {what} better. You are scored by {metric} ({info.description}; **{info.direction}
is better**) on a hidden holdout that you never see, after a scorer retrains your `train.py` from scratch.
The eval {metric} printed by `train.py` is a guide, not the score.

## The data

`data/train.csv` and `data/eval.csv` ({split}), columns {', '.join(f'`{c}`' for c in features)} and the
label `{req.target}`.

## The rules

1. Train on `data/train.csv`. You may use `data/eval.csv` to evaluate and as the early-stopping set
   (`eval_set=`/`evals=`) only. Never train on it: no concatenating it to the training rows, no
   statistics or target encodings computed from its labels, no continuing a model on it.
2. Fit encoders, scalers and statistics on training data only. `{fn}(df)` must treat each row on its own:
   never compute counts, means, ranks or any other statistic from the frame it is given. The scorer calls
   it on shuffled batches of unknown size and checks that a row's prediction does not depend on its batch.
3. Keep the contract: `train.py` trains when run as `python train.py` from this folder, prints
   `Eval {_eval_label(metric)}: x.xxxx`, and leaves a module-level `{fn}(df)` that takes a raw frame with the
   feature columns above (no label) and returns {returns}.
4. Leave your best version committed in this git repository (`git commit`). The scorer takes the
   committed `train.py` at the end of the run.
5. Run experiments only through `./run_experiment`: each call counts against your budget, runs
   `train.py` with the time limit, and records its eval {metric}.
6. No network. Do not try to read, change or stop anything outside this folder.

## The budget

Your budget is in `BUDGET.md` in this folder (written when the run starts).
"""


def _read_table(path: Path) -> pd.DataFrame:
    if path.suffix.lower() == ".parquet":
        return pd.read_parquet(path)
    if path.suffix.lower() == ".csv":
        return pd.read_csv(path)
    raise ConfigError(f"{path}: a .csv or .parquet file")


def new_ml_task(req: MlTaskRequest, root: Path, *, force: bool = False) -> Path:
    """Write the bundle of `req` under `root` (the tasks folder); returns its folder."""
    if not req.data.is_file():
        raise ConfigError(f"--data: {req.data} is not a file")
    if req.task_type not in METRICS:
        raise ConfigError(f"--task-type: one of {', '.join(METRICS)}")
    metric = req.metric or default_metric(req.task_type)
    try:
        metric_info(req.task_type, metric)
    except ValueError as exc:
        raise ConfigError(f"--metric: {exc}") from None
    table = _read_table(req.data)
    if req.target not in table.columns:
        raise ConfigError(f"--target: {req.data.name} has no column {req.target!r}; it has "
                          f"{', '.join(map(str, table.columns))}")
    excluded = {req.target, *([req.time_column] if req.time_column else [])}
    features = list(req.features) if req.features else [c for c in table.columns if c not in excluded]
    unknown = [c for c in [*features, *([req.time_column] if req.time_column else [])] if c not in table.columns]
    if unknown:
        raise ConfigError(f"{req.data.name} has no column {', '.join(map(repr, unknown))}")
    values = sorted({str(v) for v in table[req.target].dropna()})
    positive: str | None = None
    negative: str | None = None
    classes: tuple[str, ...] = ()
    if req.task_type == "binary":
        if len(values) != 2:
            raise ConfigError(f"--target: a binary target has two values; {req.target!r} has {len(values)}")
        if req.positive_label not in values:
            raise ConfigError(f"--positive-label: one of {', '.join(values)}")
        positive = req.positive_label
        negative = next(v for v in values if v != positive)
    elif req.task_type == "multiclass":
        if not 2 <= len(values) <= MAX_CLASSES:
            raise ConfigError(f"--target: a multiclass target has 2 to {MAX_CLASSES} values; it has {len(values)}")
        classes = tuple(values)
    elif not pd.api.types.is_numeric_dtype(table[req.target]):
        raise ConfigError(f"--target: a regression target is numeric; {req.target!r} is {table[req.target].dtype}")
    if req.time_column and req.cuts is None:
        raise ConfigError("--cuts: a time split names three cut dates (where eval, holdout and later begin)")
    dest = root / req.name
    if dest.exists():
        if not force:
            raise ConfigError(f"{dest}: exists (--force replaces it)")
        shutil.rmtree(dest)
    (dest / "repo").mkdir(parents=True)
    (dest / "source").mkdir()
    source = dest / "source" / req.data.name
    shutil.copyfile(req.data, source)
    split: TimeSplit | StratifiedSplit
    if req.time_column:
        assert req.cuts is not None
        split = TimeSplit(column=req.time_column, cuts=req.cuts, until=req.until)
    else:
        split = StratifiedSplit(fractions=dict(zip(("train", "eval", "holdout"), req.fractions, strict=True)),
                                stratify=req.task_type != "regression")
    recipe = DataRecipe(source=FileTable(path=f"source/{req.data.name}", sha256=file_sha256(source)),
                        columns={c: c for c in [*features, req.target]}, target=req.target, split=split,
                        rows=dict(req.rows or {}), seed=req.seed)  # type: ignore[arg-type]
    fn = "predict" if req.task_type == "regression" else "predict_proba"
    task: dict[str, object] = {
        "name": req.name, "kind": "ml", "description": req.description or f"Predict {req.target}.",
        "task_type": req.task_type, "metric": metric, "target": req.target,
        **({"positive_label": positive, "negative_label": negative} if positive else {}),
        **({"classes": list(classes)} if classes else {}),
        "data": req.name,
        "files": {
            "train": {"path": "train.csv", "to": "data/train.csv", "visible_to_agent": True},
            "eval": {"path": "eval.csv", "to": "data/eval.csv", "visible_to_agent": True},
            "holdout": {"features": "holdout.features.csv", "labels": "holdout.labels.csv", "visible_to_agent": False},
            **({"later": {"features": "later.features.csv", "labels": "later.labels.csv", "visible_to_agent": False}}
               if req.time_column else {}),
        },
        "repo": "repo",
        "contract": {"entrypoint": "train.py", "predict": fn, "eval_line": eval_line(metric)},
    }
    head = (f"# Made by `sbx tasks new {req.name} --ml` from {req.data.name}: a {req.task_type} task scored by "
            f"{metric}.\n# Its data: `sbx data prepare --task {req.name}` (data.yaml). Edit freely; see docs/tasks.md.\n")
    (dest / "task.yaml").write_text(head + yaml.safe_dump(task, sort_keys=False))
    (dest / RECIPE_FILE).write_text(
        f"# The data recipe of {req.name} (docs/tasks.md, 'Bring your own ML task').\n"
        + yaml.safe_dump(recipe.model_dump(mode="json", exclude_defaults=False), sort_keys=False))
    (dest / "repo" / "train.py").write_text(train_text(req.target, req.task_type, metric, positive=positive,
                                                       classes=classes))
    (dest / "repo" / "program.md").write_text(_program(req, metric, features, classes, positive, fn))
    client = dest / "repo" / "run_experiment"
    client.write_text(run_experiment_text(metric))
    client.chmod(0o755)
    return dest
