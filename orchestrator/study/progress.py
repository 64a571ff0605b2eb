"""Progress of a running study: a live table on a terminal, plain log lines otherwise (what another shell
reads of a study at any time is study/status.py)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.ledger import Ledger
from orchestrator.ledger.fields import short_run_id
from orchestrator.log import get_logger
from orchestrator.specs.tasktypes import direction_words
from orchestrator.study.backend import JobResult
from orchestrator.study.runner import Tally
from orchestrator.study.status import study_status

if TYPE_CHECKING:  # rich loads only for a live table on a terminal: a study logging lines never imports it
    from rich.console import Console, Group
    from rich.live import Live
    from rich.table import Table
    from rich.text import Text

log = get_logger(__name__)


def study_results(ledger: Ledger, study_id: str) -> dict[str, dict[str, Any]]:
    """Per pairing, over the latest attempt of each repeat: runs, scored, failed, flagged, mean and best holdout
    score ("best" in the metric's direction: the lowest RMSE), the metric the scores are in, graded and passed
    (tests tasks), and the best run. One SQL statement, the one `sbx view`'s study page shows
    (orchestrator/study/results.py `pairing_results`): the final table and the viewer cannot disagree, and
    neither loads a study's runs into Python."""
    from orchestrator.study.results import pairing_results

    with ledger._read() as conn:  # one snapshot, on the ledger's own connection
        return pairing_results(conn, study_id)


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
    the tally (kept by the driver) and a `StatusPoller`: an event costs the driver nothing but a flag.
    Every redraw reads `clock` afresh, so the elapsed time moves between events too."""

    def __init__(self, ledger: Ledger, name: str, slots: int, live: bool | None = None,
                 poll_interval_s: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ledger, self.name, self.slots = ledger, name, slots
        self.live_mode = sys.stderr.isatty() if live is None else live
        self.console: Console | None = None
        if self.live_mode:
            from rich.console import Console

            self.console = Console(stderr=True)
        self.poll_interval_s = poll_interval_s
        self.clock = clock
        self._live: Live | None = None
        self._poller: StatusPoller | None = None
        self._tally: Tally | None = None
        self.study_id = ""

    def _status(self) -> dict[str, Any]:
        return ((self._poller.latest if self._poller is not None else None)
                or {"pairings": {}, "cpu_seconds": 0})

    def _heading(self) -> list[Text]:
        """The table's heading as two lines of whole phrases: a table's title wraps at the table's width (55
        columns here), which cut "about 3m10s left" in two on an 80-column terminal. Each line is cut at the
        terminal's edge rather than wrapped (only a long study name reaches it)."""
        from rich.text import Text

        tally, status = self._tally, self._status()
        running = len(tally.running) if tally is not None else 0
        elapsed = _eta(self.clock() - tally.started) if tally is not None else "-"
        eta = _eta(tally.eta_seconds(self.slots)) if tally is not None else "-"
        lines = (f"study {self.name}: {running} running on {self.slots} slots",
                 f"{status['cpu_seconds']} CPU-s, {elapsed} elapsed, about {eta} left")
        return [Text(line, style="italic", no_wrap=True, overflow="ellipsis") for line in lines]

    def _table(self) -> Table:
        from rich.table import Table

        t = Table()
        for col in ("pairing", "planned", "running", "scoring", "done", "failed"):
            t.add_column(col, justify="left" if col == "pairing" else "right")
        for pairing, counts in self._status()["pairings"].items():
            t.add_row(pairing, *(str(counts.get(c, 0)) for c in ("planned", "running", "scoring", "done", "failed")))
        return t

    def render(self) -> Group:
        """What the live display shows now: the heading over the table (rich calls it on every redraw)."""
        from rich.console import Group

        return Group(*self._heading(), self._table())

    def __call__(self, what: str, tally: Tally, outcome: JobResult | None) -> None:
        self._tally = tally
        if not self.study_id:
            found = self.ledger.get_study_by_name(self.name)
            self.study_id = found.study_id if found else ""
        if self.live_mode:
            if what == "start":
                if self.study_id:
                    self._poller = StatusPoller(self.ledger.path, self.study_id, self.poll_interval_s)
                    self._poller.start()
                from rich.live import Live

                self._live = Live(get_renderable=self.render, console=self.console, refresh_per_second=2)
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
