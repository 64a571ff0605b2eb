"""What another shell reads of a study at any time: its counts by state (`sbx study status`), its lock's
holder, and the latest attempt of each planned run.

Kept apart from the driver (study/runner.py loads the Docker SDK, the task specs and the backends) so a
command that only reads a study starts without them (issue 23).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from orchestrator.failures import LedgerUnavailable, SbxError
from orchestrator.home import Home
from orchestrator.ledger import Ledger


class StudyBusy(SbxError):
    """Another process is running this study."""

    exit_code = 3


def lock_path(home: Home, name: str) -> Path:
    return home.study_dir(name) / "lock"


@contextlib.contextmanager
def study_lock(home: Home, name: str) -> Iterator[Path]:
    """An exclusive lock per study, released by the kernel when the holder dies (even by SIGKILL)."""
    path = lock_path(home, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise StudyBusy(f"study {name} is being run by another process (pid {f.read().strip() or '?'})") from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        try:
            yield path
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def lock_holder(home: Home, name: str) -> int | None:
    """The pid running the study now, or None."""
    path = lock_path(home, name)
    if not path.exists():
        return None
    with open(path) as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = f.read().strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(f, fcntl.LOCK_UN)
    return None


class Attempt(Protocol):
    """What `latest_attempts` reads of an attempt (a RunRecord, or the ledger's lighter AttemptState)."""

    @property
    def task(self) -> str: ...
    @property
    def pairing(self) -> str: ...
    @property
    def repeat(self) -> int: ...
    @property
    def attempt(self) -> int: ...


A = TypeVar("A", bound=Attempt)


def latest_attempts(runs: Iterable[A]) -> dict[tuple[str, str, int], A]:
    """The latest attempt of each (task, pairing, repeat): the one that stands for the planned run."""
    latest: dict[tuple[str, str, int], A] = {}
    for run in runs:
        key = (run.task, run.pairing, run.repeat)
        if key not in latest or run.attempt > latest[key].attempt:
            latest[key] = run
    return latest


#: the five columns of a study's status, from the run states
STATE_BUCKETS = {"planned": "planned", "starting": "running", "running": "running", "delivered": "scoring",
                 "scored": "scoring", "audited": "done", "failed": "failed", "cancelled": "failed"}


def study_status(ledger: Ledger, study_id: str) -> dict[str, Any]:
    """Counts per pairing over the latest attempt of each (task, pairing, repeat), plus totals (and, for a
    study of several tasks, per task), and the ids of the running and the failed runs (for `sbx view`)."""
    runs = ledger.attempt_states(study_id)  # the state columns only: no run's meta decoded
    latest = latest_attempts(runs)
    attempts = len(runs)
    cpu = sum(run.cpu_seconds_container or 0.0 for run in runs)
    per: dict[str, Counter[str]] = defaultdict(Counter)
    per_task: dict[str, Counter[str]] = defaultdict(Counter)
    ids: dict[str, list[str]] = defaultdict(list)
    for (task, pairing, _), run in latest.items():
        bucket = STATE_BUCKETS[str(run.status)]
        per[pairing][bucket] += 1
        per_task[task][bucket] += 1
        if bucket in ("running", "failed"):
            ids[bucket].append(run.run_id)
    out: dict[str, Any] = {"pairings": {k: dict(v) for k, v in sorted(per.items())}, "runs": len(latest),
                           "attempts": attempts, "cpu_seconds": round(cpu, 1),
                           "running_runs": sorted(ids["running"]), "failed_runs": sorted(ids["failed"])}
    if len(per_task) > 1:
        out["tasks"] = {k: dict(v) for k, v in sorted(per_task.items())}
    return out


def study_id_of(ledger: Ledger, name: str) -> str:
    """The id of the study named `name` (or whose id it is)."""
    found = ledger.get_study_by_name(name) or ledger.get_study(name)
    if found is None:
        raise LedgerUnavailable(f"no study named {name!r} in the ledger {ledger.path}")
    return found.study_id
