"""`sbx score` and `sbx rescore` end to end against the real engine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from orchestrator.cli import build_parser
from orchestrator.ledger import Ledger

FAST = textwrap.dedent('''
    import pandas as pd
    train = pd.read_csv("data/train.csv")
    RATE = (train["dep_delayed_15min"] == "Y").groupby(train["UniqueCarrier"]).mean()
    def predict_proba(df):
        return df["UniqueCarrier"].map(RATE).astype(float).fillna(0.5).to_numpy()
''')


def sbx(*argv: str) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process (it configures logging for its process; the test's stays untouched)."""
    env = {**os.environ, "SBX_HOME": os.environ.get("SBX_HOME", "/nonexistent-sbx-home")}
    return subprocess.run([sys.executable, "-m", "orchestrator", *argv], capture_output=True, text=True, env=env,
                          timeout=600, check=False)


def test_the_commands_are_registered() -> None:
    args = build_parser().parse_args(["score", "x.py", "--dataset", "later", "--batch-rows", "64", "--json"])
    assert (args.dataset, args.batch_rows, args.json) == ("later", 64, True)
    args = build_parser().parse_args(["rescore", "--data", "later", "--run", "a", "--run", "b", "--parallel", "3"])
    assert (args.runs, args.parallel) == (["a", "b"], 3)


def test_rescore_refuses_without_runs_and_explains_study() -> None:
    a, b = sbx("rescore", "--data", "later"), sbx("rescore", "--data", "later", "--study", "s1")
    assert a.returncode == b.returncode == 2
    assert "--run RUN_ID" in a.stderr and "ledger" in b.stderr


@pytest.mark.docker
def test_sbx_score_a_single_train_py_as_json(scorer_image, flight_data, tmp_path) -> None:
    script = tmp_path / "anything.py"
    script.write_text(FAST)
    proc = sbx("score", str(script), "--data-dir", str(flight_data), "--dataset", "later", "--batch-rows", "500",
               "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["status"] == "scored" and out["dataset"] == "later" and out["batch_rows"] == 500
    assert out["n"] == 3000 and 0.5 < out["auc"] < 0.8 and out["batch_dependent"] is False


@pytest.mark.docker
def test_sbx_score_reports_an_unscorable_folder(scorer_image, flight_data, tmp_path) -> None:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "train.py").write_text("raise RuntimeError('nope')\n")
    proc = sbx("score", str(tmp_path / "repo"), "--data-dir", str(flight_data))
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "unscorable: train_error" in out and "RuntimeError: nope" in out


@pytest.mark.docker
def test_sbx_rescore_is_resumable_and_parallel(scorer_image, flight_data, tmp_path) -> None:
    artifacts = tmp_path / "runs"
    ledger = tmp_path / "ledger.sqlite"
    with Ledger(ledger) as led:
        run_a, run_b, run_c, missing = (led.new_run(task="flight-delays", agent="noop", budget_name="smoke")
                                        for _ in range(4))
    for run_id in (run_a, run_b, run_c):
        (artifacts / run_id).mkdir(parents=True)
        (artifacts / run_id / "train.py").write_text(FAST if run_id != run_c else "x = 1\n")
    base = ["rescore", "--data", "later", "--ledger", str(ledger), "--artifacts", str(artifacts),
            "--data-dir", str(flight_data), "--parallel", "2"]
    runs = ["--run", run_a, "--run", run_b, "--run", run_c, "--run", missing]
    proc = sbx(*base, *runs)
    out = proc.stdout
    assert proc.returncode == 1, proc.stderr  # `missing` has no artifact: an error that stops nothing else
    assert "3 scored, 0 already had a score, 1 failed" in out
    assert f"{run_c} later: unscorable: no_predict_proba" in proc.stderr  # progress goes to stderr
    with Ledger(ledger, create=False) as led:
        assert led.scores.of_run(run_a)["later"].status == "scored"
        assert led.scores.of_run(run_c)["later"].reason == "no_predict_proba"
        assert led.scores.of_run(missing) == {}
    (artifacts / missing).mkdir()
    shutil.copyfile(artifacts / run_a / "train.py", artifacts / missing / "train.py")
    proc = sbx(*base, *runs)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "1 scored, 3 already had a score, 0 failed" in out


def test_a_rescore_line_gives_the_score_in_the_tasks_metric() -> None:
    """An RMSE task's score has no AUC: the line names its metric (it printed `AUC` of None, and failed)."""
    from orchestrator.cli.score import progress_line
    from orchestrator.ledger import ScoreResult
    from orchestrator.scoring.rescore import Progress

    rmse = ScoreResult(dataset="later", status="scored", metric="rmse", score=56.99, n=2000, seconds=2.0)
    auc = ScoreResult(dataset="later", status="scored", auc=0.7123, n=2000, seconds=1.5, batch_dependent=True)
    bad = ScoreResult(dataset="later", status="unscorable", reason="no_predict_proba", seconds=0.5)
    assert progress_line(Progress(1, 3, "r-1", rmse, None), "later") == "[1/3] r-1 later: RMSE 56.9900 (2.0s)"
    assert progress_line(Progress(2, 3, "r-2", auc, None), "later") == \
        "[2/3] r-2 later: AUC 0.7123 batch_dependent (1.5s)"
    assert progress_line(Progress(3, 3, "r-3", bad, None), "later") == \
        "[3/3] r-3 later: unscorable: no_predict_proba (0.5s)"
    assert progress_line(Progress(3, 3, "r-4", None, "no artifact"), "later") == "[3/3] r-4 later: error: no artifact"
