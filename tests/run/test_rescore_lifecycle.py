"""`sbx rescore` is the lifecycle's own scoring step: for the same run and data set it gives exactly what the
run's lifecycle gave, on a task that is not the default one (found where the run loaded it) and a budget
that is not a shipped one (the scorer's CPU limit is one experiment's allowance of *that* budget)."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from orchestrator.agents import resolve_agent
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.paths import tasks_root
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.run.rescore import rescore_runs
from orchestrator.specs import load_task
from orchestrator.specs.budget import load_budget

#: wall-clock and CPU readings differ between two scorings of the same code; everything else must not
TIMES = {"seconds", "cpu_seconds", "train_seconds", "predict_seconds", "train_cpu_seconds"}


#: the eval line of the task below: train.py never prints it, so the run's reported eval score is None
EVAL_LINE = r"Eval score \(on another line\):\s*([0-9]*\.?[0-9]+)"


def _own_task(tmp_path: Path) -> Path:
    """flight-delays under another name, reading another eval line: a rescore that took the default task
    would find train.py's `Eval AUC: ...` and report a score where the lifecycle reported none."""
    folder = tmp_path / "tasks" / "delays-elsewhere"
    shutil.copytree(tasks_root() / "flight-delays", folder)
    spec = yaml.safe_load((folder / "task.yaml").read_text())
    spec["name"] = "delays-elsewhere"
    spec["contract"]["eval_line"] = EVAL_LINE
    (folder / "task.yaml").write_text(yaml.safe_dump(spec))
    return folder


@pytest.mark.docker
@pytest.mark.slow
def test_a_rescore_gives_what_the_lifecycle_gave(docker_client, built_images, tmp_path: Path,
                                                 small_flight_data: Path) -> None:
    home = Home(tmp_path / "sbx")
    task = load_task(_own_task(tmp_path))
    budget = load_budget("smoke").model_copy(update={"name": "thrifty", "cpu_seconds": 90, "experiments": 3,
                                                                   "experiment_timeout_s": 40})
    req = RunRequest(task=task, budget=budget, agent=resolve_agent("noop"), data_dir=small_flight_data,
                     datasets=("holdout", "later"))
    with Ledger(home.ledger_path) as ledger:
        lifecycle = RunLifecycle(home, ledger, docker_client)
        record = lifecycle.run(req, lifecycle.plan(req))
        assert record.status == "audited", record.failure_reason
        by_lifecycle = ledger.scores.of_run(record.run_id)["later"]
        assert by_lifecycle.status == "scored" and by_lifecycle.auc is not None
        assert by_lifecycle.eval_score_reported is None  # the task's own eval line, not flight-delays'
        holdout = ledger.scores.of_run(record.run_id)["holdout"]

        report = rescore_runs(home, ledger, [record.run_id], "later", data_dir=small_flight_data, force=True)
        assert report.ok and list(report.scored) == [record.run_id]
        by_rescore = report.scored[record.run_id]
        assert ledger.scores.of_run(record.run_id)["later"] == by_rescore

    same = {k: v for k, v in dataclasses.asdict(by_lifecycle).items() if k not in TIMES}
    assert {k: v for k, v in dataclasses.asdict(by_rescore).items() if k not in TIMES} == same
    # the scorer's CPU limit is one experiment's allowance of this run's budget (1 core x 40 s), not None
    # (no limit: what `sbx rescore` gave when it took its limits from its own options)
    assert by_rescore.cpu_limit_s == 40.0
    # and the main data set's scoring had what later ones skip: the evaluation rows' score
    assert holdout.eval_score is not None and by_rescore.eval_score is None


def test_sbx_rescore_refuses_a_run_whose_task_cannot_be_found(tmp_path: Path) -> None:
    home = tmp_path / "sbx"
    with Ledger(Home(home).ledger_path) as ledger:
        run_id = ledger.new_run(task="no-such-task", agent="noop", budget_name="smoke")
    proc = subprocess.run([str(Path(sys.executable).with_name("sbx")), "rescore", "--run", run_id,
                           "--artifacts", str(tmp_path)], capture_output=True, text=True,
                          env={"SBX_HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert proc.returncode != 0
    assert "no-such-task" in proc.stderr and "--task PATH" in proc.stderr, proc.stderr
