"""How fast `compliance` audits train.py files: 500 corpus files on one core, against the target of 100 files/s.

The files are the labelled corpus repeated and perturbed (each copy gets a distinct comment and an extra
helper function, so no two sources are the same) and written to a temporary folder, then audited with
`audit_paths` as `sbx audit FOLDER` would: reading, parsing, both traces, records.

    python benchmarks/bench_audit.py [--files 500] [--cpu 0]

Prints wall-clock and CPU seconds (CPU time is the fairer figure on a shared machine), files per second,
and the ratio to the target (above 1.0 means faster than required). The target was 500 files in 10 s
(50 files/s); issue 14 raised it to 100 files/s for the corpus (real agent files, longer, are measured by
`bench_audit_real.py`).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "compliance" / "corpus"
TARGET_FILES, TARGET_SECONDS = 500, 5.0


def perturbed_sources(n: int) -> list[str]:
    sources = [p.read_text() for p in sorted(CORPUS.rglob("*.py"))]
    if not sources:
        raise SystemExit(f"no corpus files under {CORPUS}")
    out = []
    for i in range(n):
        base = sources[i % len(sources)]
        helper = f"def _bench_helper_{i}(frame):\n    return frame.head({i % 7 + 1})\n"
        out.append(f"# benchmark copy {i}\n{base}\n\n{helper}")
    return out


def run(n_files: int) -> dict[str, float]:
    from orchestrator.compliance.audit import audit_paths

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i, source in enumerate(perturbed_sources(n_files)):
            (folder / f"variant_{i:04d}.py").write_text(source)
        wall, cpu = time.perf_counter(), time.process_time()
        records = audit_paths([folder])
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    flagged = sum(r.verdict == "flagged" for r in records)
    return {"files": n_files, "records": len(records), "flagged": flagged, "wall_s": wall, "cpu_s": cpu}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=TARGET_FILES)
    parser.add_argument("--cpu", type=int, default=None, help="pin to this CPU (default: the first allowed)")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        allowed = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {args.cpu if args.cpu is not None else allowed[0]})
    sys.path.insert(0, str(REPO))
    result = run(args.files)
    per_second_wall = result["files"] / result["wall_s"]
    per_second_cpu = result["files"] / result["cpu_s"]
    target_rate = TARGET_FILES / TARGET_SECONDS
    print(
        f"audited {result['files']:.0f} files ({result['records']:.0f} records, "
        f"{result['flagged']:.0f} flagged) on one core"
    )
    print(
        f"  wall {result['wall_s']:.2f} s  -> {per_second_wall:.0f} files/s  "
        f"({per_second_wall / target_rate:.1f}x the target of {target_rate:.0f} files/s)"
    )
    print(
        f"  cpu  {result['cpu_s']:.2f} s  -> {per_second_cpu:.0f} files/s  "
        f"({per_second_cpu / target_rate:.1f}x the target)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
