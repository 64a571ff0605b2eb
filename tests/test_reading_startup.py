"""The commands that only read the ledger start light (issue 23): each runs here for real, in a fresh
process, on a small ledger, and afterwards none of the heavy modules a run or a report needs (the Docker SDK,
pandas, xgboost, aiohttp, ray) is loaded. That holds on any machine's speed; the start-up times themselves
are measured by benchmarks/bench_scale.py and recorded in docs/statistics.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.ledger import Ledger, RunState, ScoreResult
from orchestrator.ledger.audits import AuditRow

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("docker", "pandas", "xgboost", "aiohttp", "ray", "sklearn", "scipy")

#: run `sbx ARGS...` in this process, then report its exit code and which heavy modules it loaded
_DRIVER = """
import json, sys
from orchestrator.cli import main
rc = main(sys.argv[2:])
print(json.dumps({"rc": rc, "loaded": [m for m in json.loads(sys.argv[1]) if m in sys.modules]}), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def small_ledger(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("reading") / "ledger.sqlite"
    with Ledger(path) as ledger:
        study = ledger.create_study("light")
        run_id = ""
        for repeat in (1, 2):
            run_id = ledger.new_run(task="task-a", agent="noop", budget_name="smoke", study_id=study, repeat=repeat)
            for state in (RunState.STARTING, RunState.RUNNING, RunState.DELIVERED):
                ledger.advance(run_id, state)
            ledger.save_score(run_id, ScoreResult(dataset="holdout", status="scored", auc=0.7, n=10, positives=3))
            ledger.advance(run_id, RunState.SCORED)
            ledger.save_audits(run_id, [AuditRow("frame_statistics", "1", "clear", "[]", "[]", None)])
            ledger.advance(run_id, RunState.AUDITED)
    return path, run_id


def _run(args: list[str], home: Path) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(HEAVY), "--log-level", "warning",
                           "--home", str(home), *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["rc"] == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return report


@pytest.mark.parametrize(("name", "args", "allowed"), [
    ("show", ["show", "{run}", "--json"], ()),
    ("study status", ["study", "status", "light", "--json"], ()),
    ("audit --study", ["audit", "--study", "light", "--json"], ()),
    # the export writes its file with pandas (the formats are pandas'); nothing else heavy
    ("export csv", ["export", "light", "--format", "csv", "--out", "{tmp}/x.csv"], ("pandas",)),
])
def test_a_reading_command_loads_nothing_heavy(name: str, args: list[str], allowed: tuple[str, ...],
                                               small_ledger: tuple[Path, str], tmp_path: Path) -> None:
    path, run_id = small_ledger
    argv = [a.format(run=run_id[-6:], tmp=tmp_path) for a in args] + ["--ledger", str(path)]
    report = _run(argv, tmp_path / "home")
    assert [m for m in report["loaded"] if m not in allowed] == [], name  # type: ignore[union-attr]
