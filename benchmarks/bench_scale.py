"""How the commands that read a study back grow with the study: 1k, 10k (and 100k) runs in one ledger.

Writes one synthetic study per size through the ledger's own API (5 pairings x 20 tasks; each run planned,
taken through starting..audited, with node and slot, 14 more events, 5 experiments, a holdout and a later
score, 3 audit rows), then times, each as its own process (wall clock, CPU = user + system, peak RSS from
that child's rusage via wait4):

- `sbx study status`, `sbx export --format csv` and `--format parquet`, the report's frame of the study
  (`study.export.runs_frame`, what `--report` and `sbx report --study` read), what the end of `sbx study
  run` reads (`study_status` and `study_results`), `sbx show TAIL` (a hex-tail prefix of a run mid-ledger),
  and the whole `sbx report` (every section, figure and table; up to `--report-up-to` runs);
- the report's best-of-k table: `orchestrator.stats.pooled_best_of_k` (the entry point the report's
  keep tables call, default 2,000 resamples) on the study's (pairing, eval score, holdout score,
  compliant) read by one SQL query; and the same with the bootstrap in one block, which is what the
  dense n_resamples x n count matrix cost before issue 23 (same figures; memory and time only; up to
  `DENSE_UP_TO` runs, past which it would need several GiB);
- floors: `sbx --help` (the start-up of any command) and, for export, one SQL join writing the same kind
  of columns (runs, study name, both scores, the audit verdicts) to CSV with the csv module.

Each figure is printed beside its ratio to the smallest size and to its floor. No figure is asserted;
this is a measurement. The 100k ledger takes minutes to write (about 7 ms a run here, every call through
the Ledger's write methods, 1,000 runs a transaction); `--work DIR` keeps the ledgers and reuses them.
Usage:
    PYTHONPATH=. .venv/bin/python benchmarks/bench_scale.py [--sizes 1000,10000[,100000]] [--repeats 1]
        [--skip "best-of-k"]   (leave out the cases whose name starts with that)  [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAIRINGS = ("claude/opus", "claude/sonnet", "codex/gpt", "aider/gpt", "noop")
TASKS = tuple(f"task-{i:02d}" for i in range(20))
#: runs written per transaction (`Ledger.batch`): the bulk path batches Ledger calls, it does not go around them
BATCH = 1_000
#: the largest study the one-block (dense) best-of-k is run on: about 1 GiB at 10k runs, ~10x that at 100k
DENSE_UP_TO = 20_000


def write_study(path: Path, runs: int) -> str:
    """A study of `runs` runs written through Ledger methods; returns the hex tail of a run mid-ledger."""
    import numpy as np

    from orchestrator.compliance.traces import RULES
    from orchestrator.ledger import Ledger, RunState, ScoreResult
    from orchestrator.ledger.audits import AuditRow

    rules = [r.name for r in RULES][:3]
    rng = np.random.default_rng(0)
    hold = rng.normal(0.74, 0.01, size=runs)
    evals = np.round(hold + rng.normal(0.0, 0.006, size=runs), 3)
    flagged = rng.random(runs) < 0.2
    middle = ""
    with Ledger(path, create=True) as ledger:
        study = ledger.create_study("bench", {"name": "bench", "repeats": runs // (len(PAIRINGS) * len(TASKS))})
        for start in range(0, runs, BATCH):
            with ledger.batch():  # BATCH runs a transaction, each call through the Ledger's own write
                for i in range(start, min(runs, start + BATCH)):
                    pairing = PAIRINGS[i % len(PAIRINGS)]
                    agent, _, model = pairing.partition("/")
                    run_id = ledger.new_run(
                        task=TASKS[(i // len(PAIRINGS)) % len(TASKS)], agent=agent, model=model or None,
                        pairing=pairing, budget_name="smoke", study_id=study, meta={"order": i},
                    )
                    ledger.advance(run_id, RunState.STARTING)
                    ledger.update_measurements(run_id, node=f"node-{i % 4}", slot=i % 8, image="sbx-agent:bench")
                    ledger.advance(run_id, RunState.RUNNING)
                    for n in range(1, 6):
                        ledger.add_experiment(run_id, status="ok", n=n, train_sha256="a" * 64,
                                              eval_score=float(evals[i]), seconds=1.0, cpu_seconds=0.9)
                    for j in range(14):
                        ledger.add_event(run_id, "tick", {"j": j})
                    ledger.update_measurements(run_id, delivered_sha256="a" * 64, wall_seconds=60.0,
                                               cpu_seconds_metered=55.0, cpu_seconds_container=56.0)
                    ledger.advance(run_id, RunState.DELIVERED)
                    for dataset, auc in (("holdout", float(hold[i])), ("later", float(hold[i]) - 0.01)):
                        ledger.scores.save(run_id, ScoreResult(
                            dataset=dataset, status="scored", auc=auc, ap=0.3, auc_se=0.01, n=2000,
                            positives=400, eval_score=float(evals[i]), seconds=3.0))
                    ledger.advance(run_id, RunState.SCORED)
                    ledger.audits.save(run_id, [
                        AuditRow(rule=rule, rule_version="1", file=None, notes_json="[]", evidence_json="[]",
                                 verdict="flagged" if flagged[i] and k == 0 else "clear")
                        for k, rule in enumerate(rules)])
                    ledger.advance(run_id, RunState.AUDITED)
                    if i == runs // 2:
                        middle = run_id
    return middle.rsplit("-", 1)[1]


#: the export floor: one join, the same kind of columns, csv.writer (no per-run reads, no pandas)
FLOOR_EXPORT = """
import csv, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
cur = conn.execute('''
SELECT runs.*, studies.name AS study_name,
       h.auc AS holdout_score, h.eval_score, h.ap AS holdout_ap, l.auc AS later_score,
       a.verdicts
FROM runs JOIN studies USING (study_id)
LEFT JOIN scores h ON h.run_id = runs.run_id AND h.dataset = 'holdout'
LEFT JOIN scores l ON l.run_id = runs.run_id AND l.dataset = 'later'
LEFT JOIN (SELECT run_id, group_concat(rule || '=' || verdict) AS verdicts FROM audits GROUP BY run_id) a
       ON a.run_id = runs.run_id
WHERE studies.name = ? ORDER BY runs.created_at, runs.rowid''', ('bench',))
with open(sys.argv[2], 'w', newline='') as f:
    w = csv.writer(f)
    w.writerow([d[0] for d in cur.description])
    w.writerows(cur)
"""

#: the report's frame of the study: the same set-based read as the export, into pandas, without the file
RUNS_FRAME = """
import sys
from orchestrator.ledger import Ledger
from orchestrator.study.export import runs_frame
from orchestrator.study.status import study_id_of
with Ledger(sys.argv[1], create=False) as ledger:
    frame = runs_frame(ledger, study_id_of(ledger, 'bench'))
print(len(frame), file=sys.stderr)
"""

#: what the end of `sbx study run` reads before printing its table: the status and the final table
STUDY_END = """
import sys
from orchestrator.ledger import Ledger
from orchestrator.study.progress import study_results
from orchestrator.study.status import study_id_of, study_status
with Ledger(sys.argv[1], create=False) as ledger:
    study = study_id_of(ledger, 'bench')
    study_status(ledger, study)
    print(len(study_results(ledger, study)), file=sys.stderr)
"""

#: the report's best-of-k table on the study's runs; argv[2] "one-block" reproduces the dense matrix's cost
BEST_OF_K = """
import sqlite3, sys
import numpy as np
from orchestrator.stats import bootstrap
from orchestrator.stats.pooled_keep_best import pooled_best_of_k
if sys.argv[2] == 'one-block':
    bootstrap._BLOCK_CELLS = 1 << 62
rows = sqlite3.connect(sys.argv[1]).execute('''
SELECT runs.pairing, s.eval_score, s.auc,
       NOT EXISTS (SELECT 1 FROM audits a WHERE a.run_id = runs.run_id AND a.verdict = 'flagged')
FROM runs JOIN scores s ON s.run_id = runs.run_id AND s.dataset = 'holdout' ORDER BY runs.run_id''').fetchall()
pairing = np.array([r[0] for r in rows])
data = np.array([r[1:] for r in rows], dtype=float)
groups = [(data[pairing == p, 0], data[pairing == p, 1], data[pairing == p, 2].astype(bool))
          for p in sorted(set(pairing))]
table = pooled_best_of_k(groups, seed=0)
print(table[-1].gain_median_low, file=sys.stderr)
"""


@dataclass(frozen=True)
class Cost:
    wall: float
    cpu: float
    rss_mb: float


def measure(argv: list[str], repeats: int) -> Cost:
    """Run argv as a child process `repeats` times; the fastest wall clock, with that run's CPU and peak RSS."""
    env = os.environ | {"PYTHONPATH": str(ROOT), "SBX_LOG_LEVEL": "warning"}
    best: Cost | None = None
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err = proc.stderr.read().decode() if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({status}): {err[-2000:]}")
        cost = Cost(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)  # Linux: KiB
        if best is None or cost.wall < best.wall:
            best = cost
    assert best is not None
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000", help="runs per ledger, comma-separated (smallest first)")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each command; the fastest is shown")
    ap.add_argument("--skip", action="append", default=[], metavar="PREFIX",
                    help="leave out the cases whose name starts with PREFIX (repeatable)")
    ap.add_argument("--report-up-to", type=int, default=10_000, metavar="RUNS",
                    help="the whole `sbx report` only up to this size (its pieces are timed at every size)")
    ap.add_argument("--work", type=Path, metavar="DIR",
                    help="keep the ledgers here and reuse one already written (default: a fresh temporary folder)")
    ap.add_argument("--write", nargs=2, metavar=("LEDGER", "RUNS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write:  # the writer runs in its own process (see below)
        from orchestrator import log

        log.configure(level="warning")
        print(write_study(Path(args.write[0]), int(args.write[1])))
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="sbx-bench-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    sbx = [py, "-m", "orchestrator", "--log-level", "warning"]
    results: dict[str, dict[int, Cost]] = {}
    floors: dict[str, dict[int, Cost]] = {}
    for size in sizes:
        ledger, tail_file = work / f"ledger-{size}.sqlite", work / f"ledger-{size}.tail"
        if not tail_file.exists():  # written whole or not at all: the tail file is written last
            for stale in work.glob(f"ledger-{size}.sqlite*"):
                stale.unlink()
            t0 = time.perf_counter()
            # written by a child process: this one stays small (stdlib only), since a child's peak RSS counts
            # what it shared with its parent before exec
            tail = subprocess.run([py, __file__, "--write", str(ledger), str(size)], check=True, text=True,
                                  capture_output=True, env=os.environ | {"PYTHONPATH": str(ROOT)}).stdout.strip()
            print(f"# wrote {size} runs in {time.perf_counter() - t0:.1f} s "
                  f"({ledger.stat().st_size / size / 1024:.1f} KiB a run)", file=sys.stderr)
            tail_file.write_text(tail)
        tail = tail_file.read_text()
        help_cost = measure([*sbx, "--help"], args.repeats)
        join_cost = measure([py, "-c", FLOOR_EXPORT, str(ledger), str(work / "floor.csv")], args.repeats)
        cases = {
            "study status": ([*sbx, "study", "status", "bench", "--ledger", str(ledger)], help_cost),
            "export csv": ([*sbx, "export", "bench", "--format", "csv", "--out", str(work / "x.csv"),
                            "--ledger", str(ledger)], join_cost),
            "export parquet": ([*sbx, "export", "bench", "--format", "parquet", "--out", str(work / "x.parquet"),
                                "--ledger", str(ledger)], join_cost),
            "runs frame (the report's read)": ([py, "-c", RUNS_FRAME, str(ledger)], join_cost),
            "study end (status + results)": ([py, "-c", STUDY_END, str(ledger)], join_cost),
            "show TAIL": ([*sbx, "show", tail, "--ledger", str(ledger)], help_cost),
            "report (sbx report, whole)": ([*sbx, "report", "bench", "--ledger", str(ledger), "--out",
                                            str(work / f"report-{size}")], help_cost),
            "best-of-k (blocks)": ([py, "-c", BEST_OF_K, str(ledger), "blocks"], help_cost),
            "best-of-k (one block, as before)": ([py, "-c", BEST_OF_K, str(ledger), "one-block"], help_cost),
        }
        if size > DENSE_UP_TO:  # the dense matrices and their copies would need several GiB
            del cases["best-of-k (one block, as before)"]
        if size > args.report_up_to:
            del cases["report (sbx report, whole)"]
        cases = {k: v for k, v in cases.items() if not any(k.startswith(p) for p in args.skip)}
        for name, (argv, floor) in cases.items():
            results.setdefault(name, {})[size] = measure(argv, args.repeats)
            floors.setdefault(name, {})[size] = floor
            print(f"# {size} {name}: {results[name][size]}", file=sys.stderr)
        results.setdefault("floor: sbx --help", {})[size] = help_cost
        results.setdefault("floor: one-join export", {})[size] = join_cost

    first = sizes[0]
    print(f"bench_scale {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}, {os.cpu_count()} CPUs, "
          f"{platform.platform()}, Python {platform.python_version()}")
    print("x1k: ratio to the smallest size; xfloor: to `sbx --help` (export: to the one-join export)")
    head = f"{'command':34} {'runs':>7} {'wall s':>8} {'x1k':>6} {'xfloor':>7} {'cpu s':>8} {'x1k':>6} " \
           f"{'xfloor':>7} {'RSS MB':>7} {'x1k':>5} {'xfloor':>6}"
    print(head)
    print("-" * len(head))
    for name, by_size in results.items():
        for size, c in by_size.items():
            base = by_size[first]
            f = floors.get(name, {}).get(size)
            fw, fc, fr = (f"{c.wall / f.wall:7.1f}", f"{c.cpu / f.cpu:7.1f}", f"{c.rss_mb / f.rss_mb:6.1f}") \
                if f else ("      -", "      -", "     -")
            print(f"{name:34} {size:>7} {c.wall:8.2f} {c.wall / base.wall:6.1f} {fw} {c.cpu:8.2f} "
                  f"{c.cpu / base.cpu:6.1f} {fc} {c.rss_mb:7.0f} {c.rss_mb / base.rss_mb:5.1f} {fr}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
