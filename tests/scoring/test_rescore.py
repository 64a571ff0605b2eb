import threading
import time
from pathlib import Path

import pytest

from orchestrator.failures import InfraError
from orchestrator.ledger import Ledger, ScoreResult
from orchestrator.scoring.rescore import rescore


def _result(dataset: str, auc: float = 0.7) -> ScoreResult:
    return ScoreResult(dataset=dataset, status="scored", auc=auc, ap=0.6, auc_se=0.01, n=10, positives=5,
                       seconds=0.1, tolerance=1e-6, batch_dependent=False)


@pytest.fixture
def ledger(tmp_path: Path):
    with Ledger(tmp_path / "ledger.sqlite") as led:
        yield led


def _runs(ledger: Ledger, n: int) -> list[str]:
    return [ledger.new_run(task="t", agent="a", budget_name="b") for _ in range(n)]


def test_rescore_is_resumable_parallel_and_survives_failures(ledger: Ledger) -> None:
    r1, r2, r3, r4, r5 = _runs(ledger, 5)
    calls: list[str] = []
    active, peak = 0, 0
    lock = threading.Lock()

    def score(run_id: str, folder: Path) -> ScoreResult:
        nonlocal active, peak
        with lock:
            calls.append(run_id)
            active += 1
            peak = max(peak, active)
        time.sleep(0.05)
        with lock:
            active -= 1
        if run_id == r3:
            raise InfraError("engine went away")
        if run_id == r4:
            return ScoreResult(dataset="later", status="unscorable", reason="timeout", detail="slow", seconds=1.0)
        assert folder == Path("/artifacts") / run_id
        return _result("later")

    seen = []
    report = rescore(ledger, [r1, r2, r3, r4, r5, r1], "later", artifact_dir=lambda r: Path("/artifacts") / r,
                     score=score, parallel=3, on_progress=seen.append)
    assert sorted(calls) == sorted([r1, r2, r3, r4, r5])
    assert peak > 1
    assert set(report.scored) == {r1, r2, r4, r5} and set(report.errors) == {r3}
    assert "engine went away" in report.errors[r3] and not report.ok
    assert [p.done for p in seen] == [1, 2, 3, 4, 5] and all(p.total == 5 for p in seen)
    assert ledger.scores.of_run(r4)["later"].reason == "timeout"

    # resumed: only the pair whose scoring never finished runs again
    calls.clear()
    again = rescore(ledger, [r1, r2, r3, r4, r5], "later", artifact_dir=lambda r: Path("/artifacts") / r,
                    score=lambda r, f: _result("later", 0.8), parallel=2)
    assert set(again.scored) == {r3} and sorted(again.skipped) == sorted([r1, r2, r4, r5]) and again.ok
    assert ledger.scores.of_run(r3)["later"].auc == 0.8
    assert ledger.scores.of_run(r1)["later"].auc == 0.7  # untouched


def test_force_rescores_everything(ledger: Ledger) -> None:
    (a,) = _runs(ledger, 1)
    rescore(ledger, [a], "holdout", artifact_dir=Path, score=lambda r, f: _result("holdout", 0.6))
    report = rescore(ledger, [a], "holdout", artifact_dir=Path, score=lambda r, f: _result("holdout", 0.9), force=True)
    assert set(report.scored) == {a} and ledger.scores.of_run(a)["holdout"].auc == 0.9


def test_a_run_the_ledger_lacks_is_an_error_not_a_score(ledger: Ledger) -> None:
    report = rescore(ledger, ["r-unknown"], "later", artifact_dir=Path, score=lambda r, f: _result("later"))
    assert not report.ok and "r-unknown" in report.errors and not report.scored
