"""`sbx study plan|run|status`, `sbx export` and `sbx gc`: replicated studies and their leftovers.

`sbx study run` exits 0 when every planned run reached a final state, 1 when some did not (run it again to
resume), 2 on a config error, 3 when the infrastructure failed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
from pathlib import Path
from typing import Any

from orchestrator.cli.common import (
    CHECK_FAILED,
    OK,
    add_json,
    add_ledger,
    add_model_files,
    home,
    open_ledger,
    print_json,
)

_SPEC_HELP = "a study file, or the name of a shipped one (studies/, e.g. demo)"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help="replicated studies: plan, run (resumable), status")
    ssub = p.add_subparsers(dest="study_command", required=True, metavar="ACTION")
    plan = ssub.add_parser("plan", help="validate a study file and show its plan without running anything")
    plan.add_argument("spec", type=Path, metavar="STUDY.yaml", help=_SPEC_HELP)
    add_model_files(plan)
    plan.add_argument("--no-connect", action="store_true",
                      help="do not check that each endpoint the pairings use takes a connection (e.g. offline)")
    add_json(plan, "the plan")
    plan.set_defaults(handler=_plan)
    run = ssub.add_parser("run", help="run a study to its end; run it again after a crash to resume",
                          description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("spec", type=Path, metavar="STUDY.yaml", help=_SPEC_HELP)
    add_ledger(run)
    run.add_argument("--data-dir", type=Path, default=None, help="prepared data (default: the task's data set)")
    run.add_argument("--slots", type=int, default=None, help="override the backend's number of sandboxes at once")
    run.add_argument("--report", action="store_true", help="write the report when the study is done")
    add_model_files(run)
    add_json(run, "the study's result")
    run.set_defaults(handler=_run, interrupted_hint="the study stopped: runs that finished are kept; "
                     "run the same `sbx study run` again to resume it")
    st = ssub.add_parser("status", help="where a study stands (works from another shell while it runs)")
    st.add_argument("name", metavar="STUDY")
    add_ledger(st)
    add_json(st, "the status")
    st.set_defaults(handler=_status)

    ex = sub.add_parser("export", help="one row per run of a study, as CSV or Parquet")
    ex.add_argument("name", metavar="STUDY")
    ex.add_argument("--format", choices=["csv", "parquet"], default="csv")
    ex.add_argument("--out", type=Path, default=None, help="output file (default: STUDY-runs.csv|parquet)")
    add_ledger(ex)
    add_json(ex, "what was written")
    ex.set_defaults(handler=_export)

    gc = sub.add_parser("gc", help="remove leftover sbx containers, volumes, socket folders and cgroups")
    gc.add_argument("--study", default=None, help="only this study's leftovers")
    gc.add_argument("--all", action="store_true",
                    help="also containers whose owning process still runs (default: only those of dead owners)")
    add_ledger(gc)
    add_json(gc, "what was removed")
    gc.set_defaults(handler=_gc)


def _plan(args: argparse.Namespace) -> int:
    from orchestrator.specs import load_budget
    from orchestrator.specs.study import load_study
    from orchestrator.specs.task import load_any_task
    from orchestrator.study.local import capacity
    from orchestrator.study.planner import plan

    spec = load_study(args.spec)
    tasks, budget = [load_any_task(t) for t in spec.task_names], load_budget(spec.budget)
    task_line = ", ".join(f"{t.name} ({t.kind})" for t in tasks)
    runs = plan(spec)
    fits, why = capacity(budget)
    models = _check_models(spec, args.endpoints, args.ratecards)
    if not args.no_connect:
        _check_endpoints_answer(spec, args.endpoints)
    if args.json:
        print_json({"study": spec.name, "task": tasks[0].name, "tasks": [t.name for t in tasks],
                    "budget": budget.name, "runs": len(runs),
                    "pairings": [p.name for p in spec.pairings], "repeats": spec.repeats,
                    "datasets": list(spec.datasets), "backend": spec.backend.type, "fits": fits,
                    "models": models,
                    "plan": [{"order": r.order + 1, "task": r.task, "repeat": r.repeat, "pairing": r.pairing.name}
                             for r in runs]})
        return OK
    graded = "graded by hidden tests" if all(t.kind == "tests" for t in tasks) else f"scored on {', '.join(spec.datasets)}"
    if len(tasks) == 1:
        print(f"study {spec.name}: task {tasks[0].name}, budget {budget.name}, {len(spec.pairings)} pairings x "
              f"{spec.repeats} repeats = {len(runs)} runs, {graded}")
    else:
        print(f"study {spec.name}: tasks {task_line}, budget {budget.name}, {len(spec.pairings)} pairings x "
              f"{len(tasks)} tasks x {spec.repeats} repeats = {len(runs)} runs, {graded}")
    print(f"backend {spec.backend.type}; this machine fits {fits} sandboxes at once ({why})")
    print(f"each run: up to {budget.cpu_seconds:g} CPU-s of Python, hard stop {budget.hard_stop_cpu_seconds:g}, "
          f"{budget.experiments} experiments, {budget.wall_clock_minutes:g} min")
    for name, m in models.items():
        print(f"  {name}: endpoint {m['endpoint']} ({m['api']}), model {m['model']}, "
              f"priced by the card of {m['rate_card']} (input ${m['price']['input']:g}/M, "
              f"output ${m['price']['output']:g}/M)")
    for r in runs:
        print(f"  {r.order + 1:>4}  repeat {r.repeat:<3} {r.pairing.name}" + (f"  {r.task}" if len(tasks) > 1 else ""))
    return OK


def _check_target(endpoints: Any, cards: Any, name: str, model: str, **kw: Any) -> Any:
    from orchestrator.run.gateway_host import check_model_target

    return check_model_target(endpoints, cards, name, model, kw.pop("on"), **kw)


def _check_models(spec: Any, endpoints_file: Path, ratecards_dir: Path) -> dict[str, Any]:
    """Every pairing's agent, and its model side (orchestrator/run/model_plan.py: endpoint, key, model,
    rate card, wire API), checked; a ConfigError names the pairing and the fix."""
    import datetime as dt

    from orchestrator.agents import command_agent, resolve_agent
    from orchestrator.failures import ConfigError
    from orchestrator.run.model_plan import check_model_pairing
    from orchestrator.specs.endpoints import load_endpoints, load_ratecards

    endpoints = cards = None
    today = dt.datetime.now(dt.UTC).date()
    out: dict[str, Any] = {}
    for p in spec.pairings:
        try:
            agent = command_agent(p.agent_command) if p.agent_command else resolve_agent(p.agent)
            if agent.kind != "cli" and p.endpoint is None:
                continue
            if p.endpoint is not None and endpoints is None:
                if not endpoints_file.is_file():
                    raise ConfigError(f"{endpoints_file}: no endpoints file (give --endpoints FILE)")
                endpoints = load_endpoints(endpoints_file)
                cards = load_ratecards(ratecards_dir) if ratecards_dir.is_dir() else None
            found = check_model_pairing(agent, p.model, p.endpoint, functools.partial(
                _check_target, endpoints or {}, cards, on=today, endpoints_file=endpoints_file,
                ratecards_dir=ratecards_dir))
        except ConfigError as exc:
            raise ConfigError(f"{spec.name}: pairing {p.name}: {exc}") from None
        assert found is not None
        out[p.name] = {"agent": agent.name, "model": p.model, "endpoint": p.endpoint, "api": found.endpoint.api,
                       "rate_card": found.rate_card_date.isoformat(), "price": found.price.model_dump()}
    from orchestrator.study.judges import study_judges

    for judge in {j.name: j for j in study_judges(spec).values()}.values():  # the judge's calls are priced too
        if endpoints is None:
            if not endpoints_file.is_file():
                raise ConfigError(f"{spec.name}: judge {judge.name}: {endpoints_file}: no endpoints file "
                                  "(give --endpoints FILE)")
            endpoints = load_endpoints(endpoints_file)
            cards = load_ratecards(ratecards_dir) if ratecards_dir.is_dir() else None
        try:
            found = _check_target(endpoints, cards, judge.endpoint, judge.model, on=today,
                                  endpoints_file=endpoints_file, ratecards_dir=ratecards_dir)
        except ConfigError as exc:
            raise ConfigError(f"{spec.name}: judge {judge.name}: {exc}") from None
        out[f"judge {judge.name}"] = {"agent": None, "model": judge.model, "endpoint": judge.endpoint,
                                      "api": found.endpoint.api, "rate_card": found.rate_card_date.isoformat(),
                                      "price": found.price.model_dump()}
    return out


def _check_endpoints_answer(spec: Any, endpoints_file: Path) -> None:
    """Every endpoint the pairings use takes a connection, else EndpointUnreachable names it and its address
    (a stopped stand-in would otherwise fail every run of the study, one by one)."""
    if not spec.endpoints_used:
        return
    from orchestrator.gateway.reach import check_reachable
    from orchestrator.specs.endpoints import endpoint, load_endpoints

    endpoints = load_endpoints(endpoints_file)  # _check_models has checked the file and each name in it
    for name in spec.endpoints_used:
        check_reachable(endpoint(endpoints, name), endpoints_file=str(endpoints_file))


def _run(args: argparse.Namespace) -> int:
    from orchestrator import engine, log
    from orchestrator.failures import EngineUnavailable
    from orchestrator.run.gateway_host import GatewayHost
    from orchestrator.specs import load_budget
    from orchestrator.specs.study import load_study
    from orchestrator.study.backend import backend_class
    from orchestrator.study.judges import study_judges
    from orchestrator.study.progress import StudyDisplay, result_table, study_results
    from orchestrator.study.runner import StudyRunner
    from orchestrator.study.status import study_id_of, study_status

    where = home(args)
    spec = load_study(args.spec)
    budget = load_budget(spec.budget)
    terminal = sys.stderr.isatty()
    # The full structured log goes to the study's folder; a terminal shows the live table and warnings.
    log_file = where.study_dir(spec.name) / "driver.log"
    log.configure(level=args.log_level, json=True if args.log_json else None, file=log_file,
                  console_level="warning" if terminal and not args.log_json else None)
    if spec.backend.type == "local":
        client = engine.client()
    else:  # a fleet driver needs no engine of its own; with one, it reaps the study's leftovers there
        try:
            client = engine.client()
        except EngineUnavailable:
            client = None
    _check_models(spec, args.endpoints, args.ratecards)
    # one model gateway for the study's runs on this host (a fleet's nodes start their own; the driver's
    # probes endpoints that keep refusing)
    gateway = (GatewayHost.from_files(args.endpoints, args.ratecards)
               if spec.endpoints_used or study_judges(spec) else None)
    with open_ledger(args, create=True) as ledger, gateway or contextlib.nullcontext():
        cls = backend_class(spec.backend.type)
        if spec.backend.type == "local":
            backend = cls(where, client, ledger, budget, slots=args.slots or spec.backend.slots, gateway=gateway)
        else:
            backend = cls(spec.backend, budget, where, ledger,
                          slots_per_node=args.slots or spec.backend.slots_per_node)
        try:
            display = StudyDisplay(ledger, spec.name, slots=len(backend.slots()), live=terminal)
            StudyRunner(spec, where, ledger, client, backend, progress=display, data_dir=args.data_dir,
                        gateway=gateway, endpoints_file=args.endpoints, ratecards_dir=args.ratecards).run()
        finally:
            backend.close()
        study_id = study_id_of(ledger, spec.name)
        status = study_status(ledger, study_id)
        results = study_results(ledger, study_id)
        report = None
        if args.report:
            from orchestrator.report import build_report, validate_runs
            from orchestrator.report.calibration import study_calibrations
            from orchestrator.study.export import runs_frame

            runs = validate_runs(runs_frame(ledger, study_id), source=f"study {spec.name}")
            report = build_report(runs, where.report_dir(spec.name), title=f"sbx study {spec.name}",
                                  exclusion="both", seed=spec.seed, source=f"study {spec.name}",
                                  judge_calibrations=study_calibrations(ledger, runs)).html
    left = sum(counts.get("planned", 0) + counts.get("running", 0) + counts.get("scoring", 0)
               for counts in status["pairings"].values())
    if args.json:
        print_json({"study": spec.name, "status": status, "results": results,
                    "report": str(report) if report else None, "log": str(log_file), "unfinished": left})
    else:
        print(result_table(spec.name, results))
        print(f"log: {log_file}")
        if report is not None:
            print(f"report: {report}")
    return OK if left == 0 else CHECK_FAILED


def _status_text(name: str, status: dict[str, Any], holder: int | None) -> str:
    lines = [f"study {name}: {status['runs']} runs ({status['attempts']} attempts), "
             f"{status['cpu_seconds']} CPU-s" + (f", running in pid {holder}" if holder else "")]
    cols = ("planned", "running", "scoring", "done", "failed")
    lines.append(f"  {'pairing':<24}" + "".join(f"{c:>9}" for c in cols))
    for pairing, counts in status["pairings"].items():
        lines.append(f"  {pairing:<24}" + "".join(f"{counts.get(c, 0):>9}" for c in cols))
    from orchestrator.ledger.fields import short_run_id

    for what in ("running", "failed"):  # the ids `sbx view` opens at /run/ID (and `sbx show ID`), ten at most
        ids = status.get(f"{what}_runs") or []
        if ids:
            lines.append(f"  {what}: " + " ".join(map(short_run_id, ids[:10])) + (" ..." if len(ids) > 10 else ""))
    lines.append(f"every run: `sbx view`, then /study/{name} (a run: /run/ID)")
    return "\n".join(lines)


def _status(args: argparse.Namespace) -> int:
    from orchestrator.study.status import lock_holder, study_id_of, study_status

    with open_ledger(args) as ledger:
        status = study_status(ledger, study_id_of(ledger, args.name))
    holder = lock_holder(home(args), args.name)
    if args.json:
        print_json({**status, "running_pid": holder})
    else:
        print(_status_text(args.name, status, holder))
    return OK


def _export(args: argparse.Namespace) -> int:
    from orchestrator.study.export import export

    out = args.out or Path(f"{args.name}-runs.{args.format}")
    with open_ledger(args) as ledger:
        path, rows = export(ledger, args.name, args.format, out)
    if args.json:
        print_json({"path": str(path), "format": args.format, "rows": rows})
    else:
        print(path)
    return OK


def _gc(args: argparse.Namespace) -> int:
    from orchestrator import engine
    from orchestrator.study.reaper import (
        orphan_cgroups,
        remove_cgroup_tree,
        remove_containers,
        remove_socket_dirs,
    )

    where = home(args)
    client = engine.client()
    study_id, run_ids = None, []
    if args.study:
        from orchestrator.study.status import study_id_of

        with open_ledger(args) as ledger:
            study_id = study_id_of(ledger, args.study)
            run_ids = [r.run_id for r in ledger.list_runs(study_id=study_id)]  # scorers carry only a run label
    runs = remove_containers(client, where.mount_parent, study_id=study_id, dead_only=not args.all, run_ids=run_ids)
    if args.all and not args.study:
        sockets = remove_socket_dirs(where.mount_parent, None)
    else:
        sockets = sum(remove_socket_dirs(where.mount_parent, r) for r in runs)
    cgroups = orphan_cgroups(client)
    for cg in cgroups:
        remove_cgroup_tree(cg)
    if args.json:
        print_json({"runs": runs, "socket_folders": sockets, "cgroups": [str(c) for c in cgroups]})
    else:
        print(f"removed leftovers of {len(runs)} runs, {sockets} socket folders, {len(cgroups)} cgroups")
    return OK
