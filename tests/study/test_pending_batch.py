"""`StudyRunner.pending()` plans a fresh study's runs in one write transaction (issue 23: one commit a run
cost a 100,000-run study a minute before its first dispatch), and stays crash-safe: a driver killed in the
middle of that transaction leaves none of its rows, and the next `pending()` plans every run once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.specs.study import load_study
from orchestrator.study.runner import StudyRunner, open_study

ROOT = Path(__file__).resolve().parents[2]
SPEC = """name: wide
task: flight-delays
budget: smoke
repeats: 20
pairings:
  - agent: noop
  - agent: hpo
  - agent: eval_concat
"""

#: a driver that dies (no commit, no cleanup) at its `kill_at`-th run insert inside pending()
_DIES_MIDWAY = """
import os, sys
from pathlib import Path
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.specs.study import load_study
from orchestrator.study.runner import StudyRunner, open_study
spec, home, kill_at = load_study(Path(sys.argv[1])), Home(Path(sys.argv[2])), int(sys.argv[3])
with Ledger(home.ledger_path, create=True) as ledger:
    runner = StudyRunner(spec, home, ledger, None, None)
    runner.study_id = open_study(ledger, spec)
    seen = []
    def die(sql):
        seen.append(sql.startswith("INSERT INTO runs"))
        if sum(seen) == kill_at:
            os._exit(9)
    ledger._connection().set_trace_callback(die)
    runner.pending()
"""


def _runner(tmp_path: Path, ledger: Ledger) -> StudyRunner:
    spec = load_study(tmp_path / "study.yaml")
    runner = StudyRunner(spec, Home(tmp_path / "home"), ledger, None, None)  # type: ignore[arg-type]  # no backend
    runner.study_id = open_study(ledger, spec)
    return runner


def test_a_fresh_study_is_planned_in_one_write(tmp_path: Path) -> None:
    (tmp_path / "study.yaml").write_text(SPEC)
    with Ledger(Home(tmp_path / "home").ledger_path, create=True) as ledger:
        runner = _runner(tmp_path, ledger)
        seen: list[str] = []
        ledger._connection().set_trace_callback(seen.append)
        jobs = runner.pending()
        ledger._connection().set_trace_callback(None)
        assert seen.count("BEGIN IMMEDIATE") == 1 and sum(s.startswith("INSERT INTO runs") for s in seen) == 60
        runs = ledger.list_runs(study_id=runner.study_id)
        # every planned run once, in plan order, each a `run` job on its row
        assert [(j.pairing, j.repeat, j.phase) for j in jobs] == [(p.pairing.name, p.repeat, "run") for p in runner.plan]
        assert sorted(j.run_id for j in jobs) == sorted(r.run_id for r in runs)
        assert [r.meta["order"] for r in runs] == [p.order for p in runner.plan]
        again = runner.pending()  # nothing new: the same rows, no write at all
        assert [j.run_id for j in again] == [j.run_id for j in jobs]
        assert len(ledger.list_runs(study_id=runner.study_id)) == 60


def test_a_driver_killed_while_planning_leaves_nothing_and_the_next_plans_all_once(tmp_path: Path) -> None:
    (tmp_path / "study.yaml").write_text(SPEC)
    home = tmp_path / "home"
    proc = subprocess.run([sys.executable, "-c", _DIES_MIDWAY, str(tmp_path / "study.yaml"), str(home), "31"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 9, proc.stderr[-3000:]
    with Ledger(Home(home).ledger_path, create=True) as ledger:
        runner = _runner(tmp_path, ledger)
        assert ledger.list_runs(study_id=runner.study_id) == []  # 30 inserted, none committed
        jobs = runner.pending()
        runs = ledger.list_runs(study_id=runner.study_id)
        assert len(runs) == len(jobs) == 60
        assert len({(r.pairing, r.repeat) for r in runs}) == 60
