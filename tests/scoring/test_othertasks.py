"""score_repo on tasks of other types, against the real scorer container: a regression scored by RMSE and
a multiclass task by log loss, their figures recomputed here from the same train.py; hostile answers."""

from __future__ import annotations

import math
import os
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from othertasks import MULTICLASS_TRAIN, ORIGINS, REGRESSION_TRAIN, make_folder
from sklearn.metrics import log_loss

from orchestrator.scoring import ScoreResult, score_repo
from orchestrator.scoring.tasktypes import TaskScoring

pytestmark = pytest.mark.docker

REGRESSION = TaskScoring(target="arr_delay", task_type="regression", metric="rmse", predict="predict")
MULTICLASS = TaskScoring(target="Origin", task_type="multiclass", metric="log_loss", classes=ORIGINS)


@pytest.fixture(scope="module")
def regression_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("delays"), "arr_delay")


@pytest.fixture(scope="module")
def multiclass_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_folder(tmp_path_factory.mktemp("origins"), "Origin")


def _score(client, image: str, data: Path, tmp_path: Path, source: str, scoring: TaskScoring) -> ScoreResult:
    repo = tmp_path / f"repo-{uuid.uuid4().hex[:6]}"
    repo.mkdir()
    (repo / "train.py").write_text(source)
    return score_repo(client, repo, data, "holdout", image=image, run_id=f"test-{uuid.uuid4().hex[:8]}",
                      scoring=scoring, eval_line=r"Eval RMSE:\s*([0-9]*\.?[0-9]+)")


def _host_predictions(source: str, data: Path, tmp_path: Path, fn: str) -> np.ndarray:
    """What the same train.py predicts for the holdout when run here (both are deterministic)."""
    work = tmp_path / "host"
    (work / "data").mkdir(parents=True)
    for name in ("train.csv", "eval.csv"):
        (work / "data" / name).write_bytes((data / name).read_bytes())
    here = os.getcwd()
    os.chdir(work)
    try:
        namespace: dict = {"__name__": "host"}
        exec(compile(source, "train.py", "exec"), namespace)  # noqa: S102 - our own test code
        return np.asarray(namespace[fn](pd.read_csv(data / "holdout.features.csv")), dtype=float)
    finally:
        os.chdir(here)


def test_a_regression_is_scored_by_rmse_end_to_end(docker_client, scorer_image, regression_data, tmp_path) -> None:
    r = _score(docker_client, scorer_image, regression_data, tmp_path, REGRESSION_TRAIN, REGRESSION)
    assert r.status == "scored", r.detail
    y = pd.read_csv(regression_data / "holdout.labels.csv")["arr_delay"].to_numpy(dtype=float)
    p = _host_predictions(REGRESSION_TRAIN, regression_data, tmp_path, "predict")
    rmse = math.sqrt(float(np.mean((p - y) ** 2)))
    assert (r.metric, r.n) == ("rmse", len(y))
    assert r.score == pytest.approx(rmse, rel=1e-9)
    se_mse = float(np.std((p - y) ** 2, ddof=1)) / math.sqrt(len(y))
    assert r.score_se == pytest.approx(se_mse / (2 * rmse), rel=1e-9)
    train_mean = pd.read_csv(regression_data / "train.csv")["arr_delay"].mean()
    assert r.score < math.sqrt(float(np.mean((train_mean - y) ** 2)))  # better than the constant
    assert r.auc is None and r.ap is None and r.positives is None
    assert r.batch_dependent is False and r.rows_checked and r.rows_changed == 0
    assert r.fresh_check == "agreed"
    assert r.eval_score is not None and r.eval_score > 1.0  # sbx's eval RMSE, in minutes
    assert r.eval_score_reported == pytest.approx(r.eval_score, abs=1e-3)  # what train.py printed


@pytest.mark.parametrize(("case", "body", "reason", "needle"), [
    ("nan", "    p = features(df) @ COEF\n    p[0] = np.nan\n    return p", "not_finite", "1 NaN"),
    ("strings", "    return [str(v) for v in features(df) @ COEF]", "not_numeric", "predict returned text"),
    ("two_columns", "    p = features(df) @ COEF\n    return np.column_stack([p, p])", "wrong_shape",
     "predict returned shape"),
])
def test_a_hostile_regression_answer_is_unscorable(case, body, reason, needle, docker_client, scorer_image,
                                                    regression_data, tmp_path) -> None:
    source = REGRESSION_TRAIN.replace("    return features(df) @ COEF", body)
    assert source != REGRESSION_TRAIN
    r = _score(docker_client, scorer_image, regression_data, tmp_path, source, REGRESSION)
    assert (r.status, r.reason) == ("unscorable", reason), r.detail
    assert needle in (r.detail or "") and r.score is None


def test_a_multiclass_task_is_scored_by_log_loss_end_to_end(docker_client, scorer_image, multiclass_data,
                                                            tmp_path) -> None:
    r = _score(docker_client, scorer_image, multiclass_data, tmp_path, MULTICLASS_TRAIN, MULTICLASS)
    assert r.status == "scored", r.detail
    y = pd.read_csv(multiclass_data / "holdout.labels.csv")["Origin"]
    p = _host_predictions(MULTICLASS_TRAIN, multiclass_data, tmp_path, "predict_proba")
    assert r.metric == "log_loss" and r.score == pytest.approx(log_loss(y, p, labels=list(ORIGINS)), rel=1e-9)
    assert r.score < math.log(3) and r.score_se is not None and r.score_se > 0
    assert r.batch_dependent is False and r.rows_changed == 0 and r.fresh_check == "agreed"


def test_multiclass_rows_that_are_not_a_distribution_are_unscorable(docker_client, scorer_image, multiclass_data,
                                                                   tmp_path) -> None:
    source = MULTICLASS_TRAIN.replace("    return out", "    return out * 0.5")
    r = _score(docker_client, scorer_image, multiclass_data, tmp_path, source, MULTICLASS)
    assert (r.status, r.reason) == ("unscorable", "not_a_distribution"), r.detail
