"""Time the call-by-call comparison of two long runs against the floor of merely parsing their JSON.

    python benchmarks/bench_diverge.py

Two stand-in Claude Code runs of 151 calls whose conversation grows with every call (each request
re-sends the whole history, as real agents do: about 33 MB of request text per run). Prints the best
of three for `compare_runs` and for `json.loads` of the same request bodies and event data, and their
ratio. Normalising re-sent conversation items once (then remembering them while no new id occurs in
them) is what keeps the ratio small; without it the comparison walked every re-sent message again.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.diverge.compare import compare_runs
from tests.diverge.standin import Step, run_transcript


def _best_of(fn: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    steps = tuple(Step(f"cat file{i}.py", f"x = {i}  # a line of code\n" * 100) for i in range(150))
    steps += (Step(None, text="done"),)
    a, b = run_transcript("claude-code", 1, steps), run_transcript("claude-code", 2, steps)
    texts = [r.request.body or "" for r in (*a, *b)] + [
        d for r in (*a, *b) for _, d in r.response.events or []
    ]
    megabytes = sum(len(t) for t in texts) / 1e6
    assert compare_runs(a, b).identical
    parse = _best_of(lambda: [json.loads(t) for t in texts if t != "[DONE]"])
    compare = _best_of(lambda: compare_runs(a, b))
    print(f"two runs of {len(a)} calls, {megabytes:.1f} MB of JSON")
    print(f"json.loads alone: {parse:.2f} s ({megabytes / parse:.0f} MB/s)")
    print(
        f"compare_runs:     {compare:.2f} s ({megabytes / compare:.0f} MB/s), {compare / parse:.1f}x parsing"
    )


if __name__ == "__main__":
    main()
