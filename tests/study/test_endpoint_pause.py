"""A study stops launching runs on an endpoint that keeps refusing, lets other pairings go ahead, and resumes
once a probe through the gateway answers (study/runner.py). The backend here is a stand-in that only keeps
the books (no containers); the gateway and the model behind it are real (the stand-in model)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.model import Fault, read_log
from orchestrator.specs.study import StudySpec
from orchestrator.study.backend import JobResult, RunJob, Slot
from orchestrator.study.runner import StudyRunner
from tests.run.standin_setup import MODEL, standin_gateway


class BookkeepingBackend:
    """Two slots; each job 'runs' for 50 ms. The first job on `failing` comes back saying the endpoint refuses."""

    name = "books"

    def __init__(self, failing: str) -> None:
        self.failing = failing
        self.log: list[tuple[float, str, str | None]] = []   # (time, pairing, endpoint) per submit
        self._pool = ThreadPoolExecutor(2)
        self._lock = threading.Lock()
        self._told = False

    def slots(self) -> list[Slot]:
        return [Slot("here", 0, "0"), Slot("here", 1, "1")]

    def alive(self, slot: Slot) -> bool:
        return True

    def submit(self, job: RunJob, slot: Slot) -> Future[JobResult]:
        self.log.append((time.monotonic(), job.pairing, job.endpoint))

        def run() -> JobResult:
            time.sleep(0.05)
            with self._lock:
                refusing = job.endpoint == self.failing and not self._told
                self._told = self._told or refusing
            return JobResult(job.run_id, "audited", None, None, slot.label, 0.05,
                              endpoint_refusing=job.endpoint if refusing else None)

        return self._pool.submit(run)

    def interrupt(self) -> None:  # the driver stopping: these runs end on their own in 0.05 s
        pass

    def close(self) -> None:
        self._pool.shutdown()


def test_runs_on_a_refusing_endpoint_wait_for_a_probe_while_others_go_on(tmp_path: Path) -> None:
    spec = StudySpec.model_validate({
        "name": "pause", "repeats": 4,
        "pairings": [{"agent": "noop", "model": MODEL, "endpoint": "standin-chat", "label": "llm"},
                     {"agent": "hpo", "label": "scripted"}]})
    backend = BookkeepingBackend("standin-chat")
    home = Home(tmp_path / "home")
    with standin_gateway(tmp_path / "model") as setup, Ledger(home.ledger_path) as ledger:
        setup.standin.faults.append(Fault(status=529))  # the first probe still fails
        runner = StudyRunner(spec, home, ledger, None, backend, gateway=setup.host,
                             endpoints_file=setup.endpoints_file, ratecards_dir=setup.ratecards_dir,
                             probe_interval_s=0.3, max_probe_interval_s=0.6)
        start = time.monotonic()
        tally = runner.run()
        probes = [c for c in read_log(setup.log_path) if c["run_id"].startswith("probe-")]
        health = setup.host.health("standin-chat")
    backend.close()
    assert len(tally.finished) == 8 and runner.paused == {}
    llm = [t - start for t, pairing, _ in backend.log if pairing == "llm"]
    scripted = [t - start for t, pairing, _ in backend.log if pairing == "scripted"]
    assert len(llm) == len(scripted) == 4
    # the first llm run came back saying its endpoint refuses: the next llm run waited for the probes
    # (the first failed with 529, the second answered 0.6 s later), while every scripted run went ahead
    assert [p["fault"] is not None for p in probes] == [True, False]
    assert llm[1] - llm[0] >= 0.3 + 0.6 - 0.05
    assert max(scripted) < llm[1]
    assert health.consecutive_failures == 0 and health.failures == 1 and health.successes == 1
    # the jobs carried the endpoint and where the node reads its files (never a key)
    ends = {e for _, p, e in backend.log if p == "llm"}
    assert ends == {"standin-chat"}
