"""How long `sbx view`'s pages take on a study of 100,000 runs (issue 24: "fast on a ledger of 100,000 runs").

Writes one synthetic study through the ledger's own API (5 pairings x 20 tasks; each run taken from planned
to audited with a holdout and a later score and 3 audit rows, a fifth flagged; every 50th run's flag
overridden by a reviewer), then times each page as `sbx view` serves it (its read-only connections, one
snapshot, the template rendered), in this process, best of `--repeats`:

- `/study/bench` (the final table's figures per pairing and the live counts),
- `/runs?study=bench&verdict=flagged` and `verdict=compliant` (the verdict filter), and sorted by score,
- `/run/ID` (one run's page), `/runs?study=bench` (the first page of the list).

No figure is asserted; this is a measurement. The ledger is kept (`--ledger FILE`: written if missing, read
as is otherwise), since writing 100k runs takes minutes. Usage:
    PYTHONPATH=. .venv/bin/python benchmarks/bench_view.py [--runs 100000] [--ledger FILE] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_scale import BATCH, PAIRINGS, TASKS, _one_transaction  # noqa: E402


def write_study(path: Path, runs: int) -> str:
    """A study of `runs` audited runs through Ledger methods; returns the id of a run mid-ledger."""
    import numpy as np

    from orchestrator.compliance.records import AuditRecord
    from orchestrator.compliance.store import add_override, save_records
    from orchestrator.ledger import Ledger, RunState, ScoreResult

    rng = np.random.default_rng(0)
    hold = rng.normal(0.74, 0.01, size=runs)
    flagged = rng.random(runs) < 0.2
    middle = ""
    with Ledger(path, create=True) as ledger:
        study = ledger.create_study("bench", {"name": "bench"})
        for start in range(0, runs, BATCH):
            with _one_transaction(ledger):
                for i in range(start, min(runs, start + BATCH)):
                    pairing = PAIRINGS[i % len(PAIRINGS)]
                    agent, _, model = pairing.partition("/")
                    run_id = ledger.new_run(
                        task=TASKS[(i // len(PAIRINGS)) % len(TASKS)], agent=agent, model=model or None,
                        pairing=pairing, budget_name="smoke", study_id=study, repeat=i // 100 + 1)
                    for state in (RunState.STARTING, RunState.RUNNING, RunState.DELIVERED):
                        ledger.advance(run_id, state)
                    for dataset, auc in (("holdout", float(hold[i])), ("later", float(hold[i]) - 0.01)):
                        ledger.scores.save(run_id, ScoreResult(
                            dataset=dataset, status="scored", auc=auc, ap=0.3, auc_se=0.01, n=2000,
                            positives=400, seconds=3.0, metric="auc", score=auc))
                    ledger.advance(run_id, RunState.SCORED)
                    save_records(ledger, run_id, [
                        AuditRecord(rule="eval_labels_in_fit", rule_version="1",
                                    verdict="flagged" if flagged[i] else "clear"),
                        AuditRecord(rule="frame_statistics", rule_version="1", verdict="clear"),
                        AuditRecord(rule="eval_features_in_fit", rule_version="1", verdict="clear"),
                    ])
                    if flagged[i] and i % 50 == 0:
                        add_override(ledger, run_id, "eval_labels_in_fit", "clear", "a reviewer cleared it")
                    ledger.advance(run_id, RunState.AUDITED)
                    if i == runs // 2:
                        middle = run_id
    return middle


def _best(fn, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--ledger", type=Path, help="the ledger file (written if missing)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    from orchestrator.home import Home
    from orchestrator.ledger import Ledger
    from orchestrator.view import ViewServer, pages
    from orchestrator.view.queries import RunQuery

    path = args.ledger or Path(tempfile.mkdtemp(prefix="sbx-bench-view-")) / "ledger.sqlite"
    if not path.exists():
        t0 = time.perf_counter()
        write_study(path, args.runs)
        print(f"wrote {args.runs} runs in {time.perf_counter() - t0:.0f} s: {path}", flush=True)
    with Ledger(path) as ledger:  # a writing open: migrates a ledger written by an older sbx
        study = ledger.get_study_by_name("bench")
        assert study is not None
        count = ledger._connection().execute("SELECT count(*) FROM runs").fetchone()[0]
        one = ledger._connection().execute("SELECT run_id FROM runs LIMIT 1 OFFSET ?", (count // 2,)).fetchone()[0]
    server = ViewServer(Home(path.parent), path, 0)  # not serving: its per-request read path only
    try:
        cases = {
            "/study/bench": lambda v: pages.study_page(v, study.study_id),
            "/runs?study=bench": lambda v: pages.runs_page(v, RunQuery(study_id=study.study_id), "bench"),
            "/runs?study=bench&verdict=flagged": lambda v: pages.runs_page(
                v, RunQuery(study_id=study.study_id, verdict="flagged"), "bench"),
            "/runs?study=bench&verdict=compliant&sort=score": lambda v: pages.runs_page(
                v, RunQuery(study_id=study.study_id, verdict="compliant", sort="score"), "bench"),
            f"/run/{one}": lambda v: pages.run_page(v, one),
        }
        print(f"{count} runs in {path}")
        for name, page in cases.items():
            seconds = _best(lambda page=page: server.read(page), args.repeats)  # type: ignore[misc]
            print(f"{seconds:8.3f} s  {name}", flush=True)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
