"""Score many stored artifacts on one data set: resumable, several scorer containers at once, and one
failure never stops the rest. Workers only score; the calling thread writes each score to the ledger."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.ledger import Ledger, ScoreResult
from orchestrator.log import get_logger

log = get_logger(__name__)

#: scores one run's artifact folder on the data set; raises only for our own failures (infra, data)
ScoreFn = Callable[[str, Path], ScoreResult]


@dataclass
class RescoreReport:
    dataset: str
    requested: int
    skipped: list[str] = field(default_factory=list)     # already had a score on this data set
    scored: dict[str, ScoreResult] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # our failures; the pair stays missing (retry later)

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    run_id: str
    result: ScoreResult | None
    error: str | None


def rescore(ledger: Ledger, run_ids: Iterable[str], dataset: str, *, artifact_dir: Callable[[str], Path],
            score: ScoreFn, parallel: int = 2, on_progress: Callable[[Progress], None] | None = None,
            force: bool = False, save: Callable[[str, ScoreResult], None] | None = None) -> RescoreReport:
    """Score each run's artifact on `dataset` unless it already has a score there (`force` re-scores).
    An `unscorable` score is a finished pair; only pairs whose scoring never completed are missing.
    `save` stores one score (default: `ledger.scores.save`), always on the calling thread."""
    store = save or ledger.scores.save
    wanted = list(dict.fromkeys(run_ids))
    already = set() if force else ledger.scores.runs_scored_on(dataset)
    todo = [r for r in wanted if r not in already]
    report = RescoreReport(dataset=dataset, requested=len(wanted), skipped=[r for r in wanted if r not in todo])
    if not todo:
        return report
    stop = threading.Event()

    def job(run_id: str) -> ScoreResult:
        if stop.is_set():
            raise RuntimeError("cancelled")
        return score(run_id, artifact_dir(run_id))

    done = 0
    with ThreadPoolExecutor(max_workers=max(1, parallel), thread_name_prefix="sbx-rescore") as pool:
        pending: dict[Future[ScoreResult], str] = {pool.submit(job, r): r for r in todo}
        try:
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    run_id = pending.pop(fut)
                    done += 1
                    result, error = None, None
                    try:
                        result = fut.result()
                        store(run_id, result)
                        report.scored[run_id] = result
                    except Exception as exc:  # noqa: BLE001 (one failure never stops the rest)
                        error = f"{type(exc).__name__}: {exc}"
                        report.errors[run_id] = error
                        log.warning("rescore.pair_failed", run_id=run_id, dataset=dataset, error=error)
                    if on_progress is not None:
                        on_progress(Progress(done, len(todo), run_id, result, error))
        except BaseException:
            stop.set()
            for fut in pending:
                fut.cancel()
            raise
    return report
