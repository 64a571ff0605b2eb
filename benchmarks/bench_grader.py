"""The grader's overhead: one grading of a task's reference solution (orchestrator/tasks/grade_tree.py)
against running the same tests directly on the host, interleaved, in one process.

A grading is: the grading tree built on the host -> a fresh hardened container (volume, create, fill,
start, exec: "container start to tests start") -> the test command in it -> the report read, the
container and volume removed, the verdict decided on the host ("tests end to verdict"). The host run is
the same test paths with this venv's pytest in a copy of the same grading tree (`python -m pytest`, the
repo root on sys.path instead of the image's editable install). Printed: medians of each phase, the whole
grading / host ratio, and the test command inside the container / host ratio (the grader's 1-CPU limit and
the image's interpreter, apart from the harness).

    .venv/bin/python benchmarks/bench_grader.py [--task sqlparse-strip-comments-keeps-hints] [--repeats 3]

Timings on a shared machine are noisy; the ratios of interleaved runs are what to read.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def host_run(tree: Path, paths: tuple[str, ...], out: Path) -> tuple[float, int]:
    """The task's test paths run directly on the host with this venv's pytest; (seconds, exit status)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", "--no-header",
                           f"--junitxml={out}", *paths], cwd=tree, capture_output=True, timeout=1800, check=False)
    return time.monotonic() - start, proc.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="sqlparse-strip-comments-keeps-hints")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    from structlog.testing import capture_logs

    from orchestrator import engine
    from orchestrator.specs.task import PytestGrader, load_tests_task
    from orchestrator.tasks.environment import default_cache, task_image
    from orchestrator.tasks.grade_tree import grade
    from orchestrator.tasks.materialise import materialise
    from orchestrator.tasks.tree import build_grading_tree
    from orchestrator.tasks.verify import oracle_delivery

    client = engine.client()
    task = materialise(load_tests_task(args.task), default_cache())  # its trees, made from the pinned sdists
    assert isinstance(task.grader, PytestGrader), "the host comparison needs a pytest task"
    image = task_image(client, task, default_cache()).tag
    rows: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="sbx-bench-grader-") as tmp:
        delivered = oracle_delivery(client, task, image, Path(tmp) / "oracle")
        for i in range(args.repeats):
            # the host run gets the same tree the grader builds (hidden tests in, protected files restored)
            host_tree = Path(tmp) / f"host-{i}"
            t0 = time.monotonic()
            build_grading_tree(delivered, task.repo_dir, task.hidden_dir, host_tree, task.protected,
                               drop_new_top_level=True)
            tree_s = time.monotonic() - t0
            host_s, host_rc = host_run(host_tree, task.grader.paths, Path(tmp) / f"host-{i}.xml")
            shutil.rmtree(host_tree)
            with capture_logs() as logs:
                t0 = time.monotonic()
                graded = grade(client, task, delivered, image, repeats=1, label=f"bench-{i}")
                grade_s = time.monotonic() - t0
            ran = next(e for e in logs if e.get("event") == "grader.ran")
            exec_s, setup_s = float(ran["seconds"]), float(ran["setup_s"])
            rows.append({"grade": grade_s, "tree": tree_s, "setup": setup_s, "exec": exec_s,
                         "after": grade_s - tree_s - setup_s - exec_s, "host": host_s})
            print(f"repeat {i + 1}: grading {grade_s:.2f}s ({'pass' if graded.passed else 'FAIL ' + graded.result.reason}"
                  f") = tree {tree_s:.2f} + container start to tests start {setup_s:.2f} + tests {exec_s:.2f} + "
                  f"tests end to verdict {grade_s - tree_s - setup_s - exec_s:.2f}; host {host_s:.2f}s (exit {host_rc})",
                  flush=True)

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    overhead = med("tree") + med("setup") + med("after")
    print(f"\ntask {task.name}: {len(task.grader.fail_to_pass) + len(task.grader.pass_to_pass)} expected tests, "
          f"{args.repeats} interleaved repeats, medians")
    print(f"  grading, whole                   {med('grade'):7.2f} s")
    print(f"    grading tree (host)            {med('tree'):7.2f} s")
    print(f"    container start to tests start {med('setup'):7.2f} s")
    print(f"    tests in the container         {med('exec'):7.2f} s")
    print(f"    tests end to verdict           {med('after'):7.2f} s")
    print(f"  same tests directly on the host  {med('host'):7.2f} s")
    print(f"  harness overhead (tree + start + end to verdict): {overhead:.2f} s")
    print(f"  ratio grading / host:                 {med('grade') / med('host'):.2f}x")
    print(f"  ratio tests in container / host:      {med('exec') / med('host'):.2f}x")
    print(f"  ratio (host + harness overhead) / host: {(med('host') + overhead) / med('host'):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
