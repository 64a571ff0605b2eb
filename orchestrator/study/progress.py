"""Progress of a running study: a live table on a terminal, plain log lines otherwise; and the status
another shell reads from the ledger at any time."""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from orchestrator.ledger import Ledger, RunState
from orchestrator.log import get_logger
from orchestrator.study.backend import RunOutcome
from orchestrator.study.runner import Tally, latest_attempts

log = get_logger(__name__)


def study_status(ledger: Ledger, study_id: str) -> dict[str, Any]:
    """Counts per pairing over the latest attempt of each (pairing, repeat), plus totals."""
    runs = ledger.list_runs(study_id=study_id)
    latest = latest_attempts(runs)
    attempts = len(runs)
    cpu = sum(run.cpu_seconds_container or 0.0 for run in runs)
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for (pairing, _), run in latest.items():
        state = str(run.status)
        bucket = {"planned": "planned", "starting": "running", "running": "running", "delivered": "scoring",
                  "scored": "scoring", "audited": "done", "failed": "failed", "cancelled": "failed"}[state]
        per[pairing][bucket] += 1
    return {"pairings": {k: dict(v) for k, v in sorted(per.items())}, "runs": len(latest), "attempts": attempts,
            "cpu_seconds": round(cpu, 1)}


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


class StudyDisplay:
    """A `Progress` callback for StudyRunner."""

    def __init__(self, ledger: Ledger, name: str, slots: int, live: bool | None = None) -> None:
        self.ledger, self.name, self.slots = ledger, name, slots
        self.live_mode = sys.stderr.isatty() if live is None else live
        self.console = Console(stderr=True)
        self._live: Live | None = None
        self.study_id = ""

    def _table(self, tally: Tally) -> Table:
        status = study_status(self.ledger, self.study_id) if self.study_id else {"pairings": {}, "cpu_seconds": 0}
        t = Table(title=f"study {self.name}: {len(tally.running)} running on {self.slots} slots, "
                        f"{status['cpu_seconds']} CPU-s, {time.monotonic() - tally.started:.0f}s elapsed, "
                        f"about {_eta(tally.eta_seconds(self.slots))} left")
        for col in ("pairing", "planned", "running", "scoring", "done", "failed"):
            t.add_column(col, justify="left" if col == "pairing" else "right")
        for pairing, counts in status["pairings"].items():
            t.add_row(pairing, *(str(counts.get(c, 0)) for c in ("planned", "running", "scoring", "done", "failed")))
        return t

    def __call__(self, what: str, tally: Tally, outcome: RunOutcome | None) -> None:
        if not self.study_id:
            found = self.ledger.get_study_by_name(self.name)
            self.study_id = found.study_id if found else ""
        if self.live_mode:
            if what == "start":
                self._live = Live(self._table(tally), console=self.console, refresh_per_second=2)
                self._live.start()
            elif self._live is not None:
                self._live.update(self._table(tally))
                if what == "end":
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
