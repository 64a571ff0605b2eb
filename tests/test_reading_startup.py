"""The commands that only read the ledger start light (issue 23): each runs here for real, in a fresh
process, on a small ledger, and afterwards none of the heavy modules a run or a report needs (the Docker SDK,
pandas, xgboost, aiohttp, ray) is loaded, nor rich (structlog imports it for tracebacks the log never uses;
only a study's live table on a terminal needs it). That holds on any machine's speed; the start-up times themselves
are measured by benchmarks/bench_scale.py and recorded in docs/statistics.md."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunState, ScoreResult
from orchestrator.ledger.audits import AuditRow
from orchestrator.run.audit import committed_train

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("docker", "pandas", "xgboost", "aiohttp", "ray", "sklearn", "scipy", "rich")

#: run `sbx ARGS...` in this process, then report its exit code and which heavy modules it loaded
_DRIVER = """
import json, sys
from orchestrator.cli import main
rc = main(sys.argv[2:])
print(json.dumps({"rc": rc, "loaded": [m for m in json.loads(sys.argv[1]) if m in sys.modules]}), file=sys.stderr)
"""


TRAIN_PY = "import pandas as pd\n\n\ndef train(path):\n    return pd.read_csv(path).mean()\n"


@pytest.fixture(scope="module")
def small_ledger(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A home whose ledger holds a study of two audited runs; the second delivered a train.py, so `sbx audit
    --study` has a file to analyse."""
    root = tmp_path_factory.mktemp("reading")
    home, path = Home(root / "home"), root / "home" / "ledger.sqlite"
    with Ledger(path) as ledger:
        study = ledger.create_study("light")
        run_id = ""
        for repeat in (1, 2):
            run_id = ledger.new_run(task="flight-delays", agent="noop", budget_name="smoke", study_id=study,
                                    repeat=repeat)
            for state in (RunState.STARTING, RunState.RUNNING, RunState.DELIVERED):
                ledger.advance(run_id, state)
            if repeat == 2:
                sha = hashlib.sha256(TRAIN_PY.encode()).hexdigest()
                train = committed_train(home, run_id, sha)
                train.parent.mkdir(parents=True)
                train.write_text(TRAIN_PY)
                ledger.update_measurements(run_id, delivered_sha256=sha)
            ledger.scores.save(run_id, ScoreResult(dataset="holdout", status="scored", auc=0.7, n=10, positives=3))
            ledger.advance(run_id, RunState.SCORED)
            ledger.audits.save(run_id, [AuditRow("frame_statistics", "1", "clear", "[]", "[]", None)])
            ledger.advance(run_id, RunState.AUDITED)
    return path, run_id


def _run(args: list[str], home: Path) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(HEAVY), "--log-level", "warning",
                           "--home", str(home), *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    # the audit's exit code is its verdict (1: a run is not compliant); any other command must succeed
    assert report["rc"] in ((0, 1) if args[0] == "audit" else (0,)), proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.strip(), "the command printed nothing"
    return report


@pytest.mark.parametrize(("name", "args", "allowed"), [
    ("show", ["show", "{run}", "--json"], ()),
    ("study status", ["study", "status", "light", "--json"], ()),
    ("audit --study", ["audit", "--study", "light", "--json"], ()),
    # the CSV is written with the csv module; Parquet is pandas' (and pyarrow's) format
    ("export csv", ["export", "light", "--format", "csv", "--out", "{tmp}/x.csv"], ()),
    ("export parquet", ["export", "light", "--format", "parquet", "--out", "{tmp}/x.parquet"], ("pandas",)),
])
def test_a_reading_command_loads_nothing_heavy(name: str, args: list[str], allowed: tuple[str, ...],
                                               small_ledger: tuple[Path, str], tmp_path: Path) -> None:
    path, run_id = small_ledger
    argv = [a.format(run=run_id[-6:], tmp=tmp_path) for a in args]
    report = _run(argv, path.parent)
    assert [m for m in report["loaded"] if m not in allowed] == [], name  # type: ignore[union-attr]


def test_a_study_that_logs_lines_never_loads_rich(small_ledger: tuple[Path, str]) -> None:
    """The live table is rich's; a study whose stderr is no terminal logs lines and does without it."""
    path, _ = small_ledger
    code = f"""
import sys
from orchestrator.ledger import Ledger
from orchestrator.study.progress import StudyDisplay
from orchestrator.study.runner import Tally
with Ledger({str(path)!r}, create=False) as ledger:
    display = StudyDisplay(ledger, "light", slots=2, live=False)
    tally = Tally(planned=2)
    for what in ("start", "started", "end"):
        display(what, tally, None)
print("rich" in sys.modules)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "False"


#: what `sbx show` and `sbx study status` do without, beyond HEAVY: the specs' pydantic models, and what
#: structlog imports for features the log never uses (asyncio for its async methods, greenlet for its deprecated
#: thread-locals; orchestrator/log.py), and tempfile (with shutil, random and the compressors)
LIGHTER = ("pydantic", "asyncio", "greenlet", "tempfile", "yaml")


def _lighter(home: Path, argv: list[str]) -> tuple[dict[str, Any], str]:
    proc = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(HEAVY + LIGHTER), "--log-level", "warning",
                           "--home", str(home), *argv], capture_output=True, text=True, cwd=ROOT, timeout=120)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["rc"] == (2 if "nonexistent" in argv else 0), proc.stderr[-3000:]
    return report, proc.stdout


@pytest.mark.parametrize("args", [
    # a run with audits: its records are read as plain data (compliance/plain.py), not pydantic's models
    ["show", "{run}", "--json"],
    ["show", "{run}"],
    ["show", "nonexistent"],
    ["study", "status", "light", "--json"],
])
def test_show_and_study_status_load_neither_pydantic_nor_asyncio(
    args: list[str], small_ledger: tuple[Path, str]
) -> None:
    path, run_id = small_ledger
    argv = [a.format(run=run_id[-6:]) for a in args]
    report, _ = _lighter(path.parent, argv)
    assert report["loaded"] == [], argv


def test_show_of_a_run_audited_with_evidence_and_overridden_loads_no_pydantic(tmp_path: Path) -> None:
    """A run audited through the write path (pydantic's records, saved by compliance/store.py) with a trace,
    a batch check, notes and a reviewer's override: `sbx show` prints its audits as the records dump them,
    without importing pydantic."""
    from orchestrator.compliance.records import AuditRecord, BatchCheck, Evidence, EvidenceStep
    from orchestrator.compliance.store import add_override, load_records, save_records

    path = tmp_path / "home" / "ledger.sqlite"
    with Ledger(path) as ledger:
        run_id = ledger.new_run(task="flight-delays", agent="noop", budget_name="smoke")
        for state in (RunState.STARTING, RunState.RUNNING, RunState.DELIVERED, RunState.SCORED):
            ledger.advance(run_id, state)
        step = EvidenceStep(file="train.py", line=4, code="model.fit(X_eval, y_eval)", names=["X_eval"],
                            note="sink", scope="train")
        save_records(ledger, run_id, [
            AuditRecord(file="train.py", rule="eval_labels_in_fit", rule_version="2", verdict="flagged",
                        evidence=[Evidence(kind="static_trace", summary="eval labels reach fit \u00e9", steps=[step]),
                                  Evidence(kind="batch_check", summary="batch", batch_check=BatchCheck(
                                      rows_checked=200, rows_changed=0, max_abs_change=0.0, tolerance=1e-9))],
                        notes=["no predict_proba"]),
            AuditRecord(file="train.py", rule="frame_statistics", rule_version="1", verdict="clear")])
        add_override(ledger, run_id, "eval_labels_in_fit", "clear", "a false positive, reviewed")
        ledger.advance(run_id, RunState.AUDITED)
        wanted = [a.model_dump(mode="json", exclude={"run_id"}) | {"final_verdict": a.final_verdict}
                  for a in load_records(ledger, run_id)]
    report, out = _lighter(path.parent, ["show", run_id[-6:], "--json"])
    assert report["loaded"] == []
    assert json.loads(out)["audits"] == wanted
    report, out = _lighter(path.parent, ["show", run_id[-6:]])
    assert report["loaded"] == [] and "eval_labels_in_fit clear, frame_statistics clear" in out


def test_structlog_still_logs_from_a_coroutine() -> None:
    """asyncio stood in for while structlog imported (orchestrator/log.py): the async methods still work, and
    every module that imports asyncio afterwards gets the one real module."""
    code = """
import sys
from orchestrator import log
assert "asyncio" not in sys.modules
import asyncio
import structlog._native
log.configure(json=True)
async def main():
    await log.get_logger("t").ainfo("from.a.coroutine", n=1)
    return asyncio.get_running_loop() is not None
print(asyncio.run(main()), sys.modules["asyncio"] is asyncio, type(asyncio).__name__)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["True", "True", "module"]
    assert '"event": "from.a.coroutine"' in proc.stderr
