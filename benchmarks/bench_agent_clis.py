"""Agent CLIs against the stand-in model: wall time per run, and what part of it the CLI spends before its
first model call, for each CLI in its agent image through the real model path (tests/agents/cli_sandbox.py:
sandbox restrictions, the run's gateway socket, the forwarder, the stand-in on the host).

Each run plays the same two-step scenario (write and commit a file with the shell tool, then finish) on a
fresh workspace, so the times compare the CLIs' own overhead, not the model's. Printed per CLI: the median
and fastest wall time of `docker exec` of the CLI (start to exit), the time to its first model call, and
the number of model calls. Also printed: the load average at the start and end, since a shared machine
shifts every figure.

    .venv/bin/python benchmarks/bench_agent_clis.py [--runs 3] [NAME ...]

Needs the agent images (`sbx images build --agents NAME...`; built here when missing) and the prepared
sizes of the task's starting repo (a small slice of real flights is made on the fly).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "agents"))

from cli_sandbox import run_cli  # noqa: E402
from conftest import flight_slices  # noqa: E402

from orchestrator import engine  # noqa: E402
from orchestrator.agents.adapters import adapter_names, get_adapter  # noqa: E402
from orchestrator.cli.images import default_agent_cache  # noqa: E402
from orchestrator.images import build_images  # noqa: E402
from orchestrator.images.agents import build_agent_images  # noqa: E402
from orchestrator.model.scenario import Scenario, Step  # noqa: E402
from orchestrator.paths import images_root  # noqa: E402
from orchestrator.sandbox.workspace import build_workspace  # noqa: E402
from orchestrator.specs import load_budget, load_task  # noqa: E402

SCENARIO = Scenario(name="bench", title="Bench run", steps=(
    Step(say="Write and commit.", shell="printf 'x\\n' > bench.txt && git add bench.txt "
                                        "&& git -c user.name=a -c user.email=a@sbx.invalid commit -qm bench"),
    Step(finish="Done."),
))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", default=adapter_names())
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    client = engine.client()
    sandbox = build_images(client, ("sandbox",))[0].tag
    images = {img.name: img for img in build_agent_images(client, args.names, sandbox_tag=sandbox,
                                                         agents_dir=images_root() / "agents",
                                                         cache=default_agent_cache())}
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"{'agent':15s} {'image MB':>8s} {'runs':>4s} {'median s':>9s} {'fastest s':>9s} "
          f"{'to 1st call s':>13s} {'calls':>5s} {'ok':>3s}")
    with tempfile.TemporaryDirectory(prefix="sbx-bench-agents-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        train, eval_ = flight_slices(n_train=2000, n_eval=1000)
        train.to_csv(data / "train.csv", index=False)
        eval_.to_csv(data / "eval.csv", index=False)
        for name in args.names:
            walls, firsts, calls, ok = [], [], [], 0
            for i in range(args.runs):
                work = Path(tmp) / f"{name}-{i}"
                work.mkdir()
                ws = work / "ws"
                build_workspace(load_task("flight-delays"), load_budget("smoke"), ws, "sbx/bench", data_dir=data)
                run = run_cli(client, get_adapter(name), images[name].tag, SCENARIO, ws, work)
                walls.append(run.seconds)
                if run.calls:  # the CLI's own start-up: from `docker exec` to the stand-in's first call
                    firsts.append(min(c["ts"] for c in run.calls) - run.extra["exec_started"])
                calls.append(len(run.calls))
                ok += run.exit_code == 0 and (ws / "bench.txt").exists()
                shutil.rmtree(work, ignore_errors=True)
            print(f"{name:15s} {images[name].size_bytes / 1e6:8.0f} {args.runs:4d} {statistics.median(walls):9.1f} "
                  f"{min(walls):9.1f} {statistics.median(firsts) if firsts else float('nan'):13.1f} "
                  f"{statistics.median(calls):5.0f} {ok:3d}")
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
