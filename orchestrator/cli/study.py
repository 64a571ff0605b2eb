"""`sbx study plan|run|status`, `sbx export` and `sbx gc`: replicated studies and their leftovers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help="replicated studies: plan, run (resumable), status")
    ssub = p.add_subparsers(dest="study_command", required=True, metavar="ACTION")
    plan = ssub.add_parser("plan", help="validate a study file and show its plan without running anything")
    plan.add_argument("spec", type=Path, metavar="STUDY.yaml")
    plan.set_defaults(handler=_plan)
    run = ssub.add_parser("run", help="run a study to its end; run it again after a crash to resume")
    run.add_argument("spec", type=Path, metavar="STUDY.yaml")
    run.add_argument("--ledger", type=Path, default=None, help="ledger file (default: $SBX_HOME/ledger.sqlite)")
    run.add_argument("--data-dir", type=Path, default=None, help="prepared data (default: the task's data set)")
    run.add_argument("--slots", type=int, default=None, help="override the backend's number of sandboxes at once")
    run.add_argument("--report", action="store_true", help="write the report when the study is done")
    run.set_defaults(handler=_run)
    st = ssub.add_parser("status", help="where a study stands (works from another shell while it runs)")
    st.add_argument("name", metavar="STUDY")
    st.add_argument("--ledger", type=Path, default=None)
    st.add_argument("--json", action="store_true")
    st.set_defaults(handler=_status)

    ex = sub.add_parser("export", help="one row per run of a study, as CSV or Parquet")
    ex.add_argument("name", metavar="STUDY")
    ex.add_argument("--format", choices=["csv", "parquet"], default="csv")
    ex.add_argument("--out", type=Path, default=None, help="output file (default: STUDY-runs.csv|parquet)")
    ex.add_argument("--ledger", type=Path, default=None)
    ex.set_defaults(handler=_export)

    gc = sub.add_parser("gc", help="remove leftover sbx containers, volumes, socket folders and cgroups")
    gc.add_argument("--study", default=None, help="only this study's leftovers")
    gc.add_argument("--all", action="store_true",
                    help="also containers whose owning process still runs (default: only those of dead owners)")
    gc.set_defaults(handler=_gc)


def _plan(args: argparse.Namespace) -> int:
    from orchestrator.specs import load_budget, load_task
    from orchestrator.specs.study import load_study
    from orchestrator.study.local import capacity
    from orchestrator.study.planner import plan

    spec = load_study(args.spec)
    task, budget = load_task(spec.task), load_budget(spec.budget)
    runs = plan(spec)
    fits, why = capacity(budget)
    print(f"study {spec.name}: task {task.name}, budget {budget.name}, {len(spec.pairings)} pairings x "
          f"{spec.repeats} repeats = {len(runs)} runs, scored on {', '.join(spec.datasets)}")
    print(f"backend {spec.backend.type}; this machine fits {fits} sandboxes at once ({why})")
    print(f"each run: up to {budget.cpu_seconds:g} CPU-s of Python, hard stop {budget.hard_stop_cpu_seconds:g}, "
          f"{budget.experiments} experiments, {budget.wall_clock_minutes:g} min")
    for r in runs:
        print(f"  {r.order + 1:>4}  repeat {r.repeat:<3} {r.pairing.name}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.failures import EngineUnavailable
    from orchestrator.ledger import Ledger
    from orchestrator.specs import load_budget
    from orchestrator.specs.study import load_study
    from orchestrator.study.backend import backend_class
    from orchestrator.study.progress import StudyDisplay
    from orchestrator.study.runner import StudyRunner

    spec = load_study(args.spec)
    budget = load_budget(spec.budget)
    if spec.backend.type == "local":
        client = engine.client()
    else:  # a fleet driver needs no engine of its own; with one, it reaps the study's leftovers there
        try:
            client = engine.client()
        except EngineUnavailable:
            client = None
    with Ledger(args.ledger) as ledger:
        cls = backend_class(spec.backend.type)
        if spec.backend.type == "local":
            backend = cls(client, ledger, budget, slots=args.slots or spec.backend.slots)
        else:
            backend = cls(spec.backend, budget, ledger, slots_per_node=args.slots or spec.backend.slots_per_node)
        try:
            display = StudyDisplay(ledger, spec.name, slots=len(backend.slots()))
            tally = StudyRunner(spec, ledger, client, backend, progress=display, data_dir=args.data_dir).run()
        finally:
            backend.close()
        from orchestrator.study.progress import study_status

        status = study_status(ledger, ledger.get_study_by_name(spec.name).study_id)
        print(_status_text(spec.name, status, None), file=sys.stderr)
        if args.report:
            from orchestrator import paths
            from orchestrator.report import build_report, validate_runs
            from orchestrator.study.export import runs_frame, study_id_of

            runs = validate_runs(runs_frame(ledger, study_id_of(ledger, spec.name)), source=f"study {spec.name}")
            out = build_report(runs, paths.sbx_home() / "reports" / spec.name, title=f"sbx study {spec.name}",
                               exclusion="both", seed=spec.seed, source=f"study {spec.name}")
            print(f"report: {out.html}")
    left = sum(counts.get("planned", 0) + counts.get("running", 0) + counts.get("scoring", 0)
               for counts in status["pairings"].values())
    return 0 if left == 0 and tally is not None else 1


def _status_text(name: str, status: dict, holder: int | None) -> str:
    lines = [f"study {name}: {status['runs']} runs ({status['attempts']} attempts), "
             f"{status['cpu_seconds']} CPU-s" + (f", running in pid {holder}" if holder else "")]
    cols = ("planned", "running", "scoring", "done", "failed")
    lines.append(f"  {'pairing':<24}" + "".join(f"{c:>9}" for c in cols))
    for pairing, counts in status["pairings"].items():
        lines.append(f"  {pairing:<24}" + "".join(f"{counts.get(c, 0):>9}" for c in cols))
    return "\n".join(lines)


def _status(args: argparse.Namespace) -> int:
    from orchestrator.ledger import Ledger
    from orchestrator.study.export import study_id_of
    from orchestrator.study.progress import study_status
    from orchestrator.study.runner import lock_holder

    with Ledger(args.ledger, create=False) as ledger:
        status = study_status(ledger, study_id_of(ledger, args.name))
    holder = lock_holder(args.name)
    if args.json:
        print(json.dumps({**status, "running_pid": holder}))
    else:
        print(_status_text(args.name, status, holder))
    return 0


def _export(args: argparse.Namespace) -> int:
    from orchestrator.ledger import Ledger
    from orchestrator.study.export import export

    out = args.out or Path(f"{args.name}-runs.{args.format}")
    with Ledger(args.ledger, create=False) as ledger:
        print(export(ledger, args.name, args.format, out))
    return 0


def _gc(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.study.reaper import orphan_cgroups, remove_cgroup_tree, remove_containers, remove_socket_dirs

    client = engine.client()
    study_id, run_ids = None, []
    if args.study:
        from orchestrator.ledger import Ledger
        from orchestrator.study.export import study_id_of

        with Ledger(create=False) as ledger:
            study_id = study_id_of(ledger, args.study)
            run_ids = [r.run_id for r in ledger.list_runs(study_id=study_id)]  # scorers carry only a run label
    runs = remove_containers(client, study_id=study_id, dead_only=not args.all, run_ids=run_ids)
    sockets = remove_socket_dirs(None) if args.all and not args.study else sum(remove_socket_dirs(r) for r in runs)
    cgroups = orphan_cgroups(client)
    for cg in cgroups:
        remove_cgroup_tree(cg)
    print(f"removed leftovers of {len(runs)} runs, {sockets} socket folders, {len(cgroups)} cgroups")
    return 0
