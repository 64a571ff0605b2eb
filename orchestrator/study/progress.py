"""Progress of a running study: a live table on a terminal, plain log lines otherwise (what another shell
reads of a study at any time is study/status.py)."""

from __future__ import annotations

import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from orchestrator.ledger import Ledger
from orchestrator.ledger.fields import short_run_id
from orchestrator.log import get_logger
from orchestrator.specs.tasktypes import direction_words, metric_by_name
from orchestrator.study.backend import RunOutcome
from orchestrator.study.runner import Tally
from orchestrator.study.status import latest_attempts, study_status

if TYPE_CHECKING:  # rich loads only for a live table on a terminal: a study logging lines never imports it
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table

log = get_logger(__name__)


class _Attempt(NamedTuple):
    """What `latest_attempts` reads of an attempt, and its row in the study's columns."""

    task: str
    pairing: str
    repeat: int
    attempt: int
    row: int


#: what the final table reads of each latest attempt's row
_RESULT_COLUMNS = ("holdout_score", "metric", "status", "compliant", "outcome", "run_id")


def study_results(ledger: Ledger, study_id: str) -> dict[str, dict[str, Any]]:
    """Per pairing, over the latest attempt of each repeat: runs, scored, flagged, mean and best holdout score
    ("best" in the metric's direction: the lowest RMSE), and the metric the scores are in."""
    from orchestrator.run.record import study_table

    table = study_table(ledger, study_id)  # one set-based read, as columns
    keys = zip(table.get("task", ()), table.get("pairing", ()), table.get("repeat", ()), table.get("attempt", ()),
               strict=True)
    attempts = (_Attempt(*key, row) for row, key in enumerate(keys))
    per: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (_, pairing, _), at in sorted(latest_attempts(attempts).items()):
        per[pairing].append({c: table[c][at.row] for c in _RESULT_COLUMNS})
    out: dict[str, dict[str, Any]] = {}
    for pairing, rows in per.items():
        scores = [r["holdout_score"] for r in rows if r["holdout_score"] is not None]
        metrics = sorted({r["metric"] for r in rows if r["holdout_score"] is not None and r["metric"]})
        # one pairing's runs of tasks in two metrics have no one best: none is given
        metric = metrics[0] if len(metrics) == 1 else None
        lower = metric is not None and not metric_by_name(metric).higher_is_better
        # the best-scoring run in the metric's direction (ties: the smallest id), the one `sbx view` opens
        best = None if len(metrics) > 1 else min(
            (r for r in rows if r["holdout_score"] is not None),
            key=lambda r: ((1 if lower else -1) * r["holdout_score"], r["run_id"]), default=None)
        out[pairing] = {
            "runs": len(rows), "scored": len(scores),
            "failed": sum(r["status"] == "failed" for r in rows),
            "flagged": sum(r["compliant"] is False for r in rows),
            "mean_holdout": round(sum(scores) / len(scores), 4) if scores else None,
            "best_holdout": (round(min(scores) if lower else max(scores), 4)
                             if scores and len(metrics) < 2 else None),
            "metric": metric,
            # tests tasks: graded runs and passes (a fail is an outcome, not a failed run)
            "graded": sum(r["outcome"] is not None for r in rows),
            "passed": sum(r["outcome"] is True for r in rows),
            "best_run": best["run_id"] if best else None,
        }
    return out


def result_table(name: str, results: dict[str, dict[str, Any]]) -> str:
    """The short table a finished study prints: one line per pairing."""
    cols: tuple[str, ...] = ("runs", "scored", "failed", "flagged", "mean_holdout", "best_holdout")
    graded = any(row.get("graded") for row in results.values())
    if graded:
        cols = ("runs", "graded", "passed", "failed")
    width = max([len("pairing"), *(len(p) for p in results)])
    metrics = sorted({str(row["metric"]) for row in results.values() if row.get("metric")})
    # the holdout's metric and which way is better, so a reader of "best" knows it is the lowest RMSE
    title = f"study {name}" + (f" (holdout: {direction_words(metrics[0])})" if len(metrics) == 1 else "")
    lines = [title, f"  {'pairing':<{width}}" + "".join(f"{c:>14}" for c in cols) + ("" if graded else "  best run")]
    for pairing, row in results.items():
        cells = ["-" if row[c] is None else (f"{row[c]:.4f}" if isinstance(row[c], float) else str(row[c]))
                 for c in cols]
        best = "" if graded else f"  {short_run_id(row['best_run']) if row.get('best_run') else '-'}"
        lines.append(f"  {pairing:<{width}}" + "".join(f"{c:>14}" for c in cells) + best)
    lines.append(f"every run: `sbx view`, then /study/{name}" + ("" if graded else " (a run: /run/ID, ID as above)"))
    return "\n".join(lines)


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


class StatusPoller:
    """`study_status` read off the driver's thread, on a ledger connection of its own: every `min_interval_s`,
    or every five times as long as the last read took, whichever is longer (so a study of 100,000 runs costs
    the driver's machine at most a sixth of a core for it, and the driver nothing). `latest` is the last
    read (None before the first)."""

    def __init__(self, ledger_path: Path, study_id: str, min_interval_s: float = 1.0) -> None:
        self.ledger_path, self.study_id, self.min_interval_s = ledger_path, study_id, min_interval_s
        self.latest: dict[str, Any] | None = None
        self.reads = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sbx-study-status", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        try:
            with Ledger(self.ledger_path, create=False) as ledger:
                wait = 0.0
                while not self._stop.wait(wait):
                    t0 = time.monotonic()
                    self.latest = study_status(ledger, self.study_id)
                    self.reads += 1
                    wait = max(self.min_interval_s, 5 * (time.monotonic() - t0))
        except Exception as exc:  # noqa: BLE001 - a display that cannot read never stops the study
            log.warning("study.status_poller_failed", error=f"{type(exc).__name__}: {exc}"[:300])


class StudyDisplay:
    """A `Progress` callback for StudyRunner. On a terminal, a live table redrawn on rich's timer from
    the tally (kept by the driver) and a `StatusPoller`: an event costs the driver nothing but a flag."""

    def __init__(self, ledger: Ledger, name: str, slots: int, live: bool | None = None,
                 poll_interval_s: float = 1.0) -> None:
        self.ledger, self.name, self.slots = ledger, name, slots
        self.live_mode = sys.stderr.isatty() if live is None else live
        self.console: Console | None = None
        if self.live_mode:
            from rich.console import Console

            self.console = Console(stderr=True)
        self.poll_interval_s = poll_interval_s
        self._live: Live | None = None
        self._poller: StatusPoller | None = None
        self._tally: Tally | None = None
        self.study_id = ""

    def _table(self) -> Table:
        from rich.table import Table

        tally = self._tally
        status: dict[str, Any] = ((self._poller.latest if self._poller is not None else None)
                                  or {"pairings": {}, "cpu_seconds": 0})
        running = len(tally.running) if tally is not None else 0
        elapsed = time.monotonic() - tally.started if tally is not None else 0.0
        eta = _eta(tally.eta_seconds(self.slots)) if tally is not None else "-"
        t = Table(title=f"study {self.name}: {running} running on {self.slots} slots, {status['cpu_seconds']} "
                        f"CPU-s, {elapsed:.0f}s elapsed, about {eta} left")
        for col in ("pairing", "planned", "running", "scoring", "done", "failed"):
            t.add_column(col, justify="left" if col == "pairing" else "right")
        for pairing, counts in status["pairings"].items():
            t.add_row(pairing, *(str(counts.get(c, 0)) for c in ("planned", "running", "scoring", "done", "failed")))
        return t

    def __call__(self, what: str, tally: Tally, outcome: RunOutcome | None) -> None:
        self._tally = tally
        if not self.study_id:
            found = self.ledger.get_study_by_name(self.name)
            self.study_id = found.study_id if found else ""
        if self.live_mode:
            if what == "start":
                from rich.live import Live

                if self.study_id:
                    self._poller = StatusPoller(self.ledger.path, self.study_id, self.poll_interval_s)
                    self._poller.start()
                self._live = Live(get_renderable=self._table, console=self.console, refresh_per_second=2)
                self._live.start()
            elif what == "end" and self._live is not None:
                if self._poller is not None:
                    self._poller.stop()
                self._live.stop()
            return
        if what == "finished" and outcome is not None:
            done = len(tally.finished)
            log.info("study.progress", study=self.name, run_id=outcome.run_id, status=outcome.status,
                     failure_class=outcome.failure_class, slot=outcome.slot, seconds=round(outcome.seconds, 1),
                     finished=done, planned=tally.planned, eta=_eta(tally.eta_seconds(self.slots)))
        elif what in ("start", "end"):
            log.info(f"study.{what}", study=self.name, planned=tally.planned, finished=len(tally.finished),
                     retried=tally.retried, seconds=round(time.monotonic() - tally.started, 1))
