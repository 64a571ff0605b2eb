"""`sbx score PATH` and `sbx rescore`: score a train.py (or repo folder), or stored artifacts, on data the
scored code never sees (see docs/scoring.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.cli.common import CHECK_FAILED, OK, add_json, add_ledger, home, open_ledger, print_json
from orchestrator.failures import ConfigError

if TYPE_CHECKING:  # loaded where rescore runs, not when the CLI parses
    from orchestrator.scoring.rescore import Progress


def _option_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--task", default="flight-delays", help="task name or folder (default: flight-delays)")
    p.add_argument("--data-dir", type=Path, default=None, help="prepared data (default: the task's data set)")
    p.add_argument("--batch-rows", type=int, default=None, help="largest batch given to predict_proba (default 1000)")
    p.add_argument("--check-rows", type=int, default=None, help="rows predicted again in another batch (default 512)")
    p.add_argument("--seed", type=int, default=None, help="seed of the batch plan (default 0)")
    p.add_argument("--train-timeout", type=float, default=None, help="seconds for train.py (default 900)")
    p.add_argument("--predict-timeout", type=float, default=None, help="seconds for all batches (default 600)")
    p.add_argument("--memory-mb", type=int, default=None, help="scorer container memory (default 4096)")
    p.add_argument("--cpus", type=float, default=None, help="scorer container CPUs (default 2, capped by the engine)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score a train.py or repo folder on hidden data, in a fresh scorer container")
    p.add_argument("path", type=Path, metavar="PATH", help="a train.py, or a repo folder holding one")
    p.add_argument("--dataset", default="holdout", choices=["holdout", "later"], help="which hidden set")
    add_json(p, "the result")
    _option_args(p)
    p.set_defaults(handler=_score)

    r = sub.add_parser("rescore", help="score stored artifacts on another data set (resumable, in parallel)")
    r.add_argument("--data", default="later", choices=["holdout", "later"], help="which hidden set (default later)")
    r.add_argument("--run", dest="runs", action="append", default=[], metavar="RUN_ID", help="a run (repeatable)")
    r.add_argument("--study", default=None, help="every run of a study (needs the ledger)")
    add_ledger(r)
    r.add_argument("--artifacts", type=Path, default=None,
                   help="folder holding each run's delivered repo as RUN_ID/ (default: each run's copy-out in HOME)")
    add_json(r, "the rescore's result")
    r.add_argument("--parallel", type=int, default=2, help="scorer containers at once (default 2)")
    r.add_argument("--force", action="store_true", help="score pairs that already have a score again")
    r.add_argument("--task", dest="tasks", action="append", default=[], metavar="TASK",
                   help="a task folder (or name) for runs whose task is not shipped and has moved (repeatable)")
    r.add_argument("--data-dir", type=Path, default=None,
                   help="prepared data (default: each run's task's data set); the scoring options are each run's own")
    r.set_defaults(handler=_rescore)


def _options(args: argparse.Namespace) -> Any:
    from orchestrator.scoring import ScoreOptions

    given = {"batch_rows": args.batch_rows, "check_rows": args.check_rows, "seed": args.seed,
             "train_timeout_s": args.train_timeout, "predict_timeout_s": args.predict_timeout,
             "memory_mb": args.memory_mb, "cpus": args.cpus}
    try:
        return ScoreOptions(**{k: v for k, v in given.items() if v is not None})
    except ValueError as exc:
        raise ConfigError(f"scoring options: {exc}") from None


def _setup(args: argparse.Namespace) -> tuple[Any, Any, str, Path, Any]:
    from orchestrator import engine
    from orchestrator.run.images import scorer_image_for
    from orchestrator.specs import load_task

    task = load_task(args.task)
    options = _options(args)
    client = engine.client()
    image = scorer_image_for(client, task)  # the task's environment's scorer (built when missing), else standard
    return task, client, image, args.data_dir or task.data_dir(home(args)), options


def _score(args: argparse.Namespace) -> int:
    from orchestrator.scoring import score_repo
    from orchestrator.scoring.tasktypes import TaskScoring

    if not args.path.exists():
        raise ConfigError(f"{args.path}: no such file or folder")
    task, client, image, data_dir, options = _setup(args)
    result = score_repo(client, args.path, data_dir, args.dataset, image=image, options=options,
                        mount_parent=home(args).mount_parent, eval_line=task.contract.eval_line,
                        scoring=TaskScoring.of(task))
    if args.json:
        print_json(result.to_json())
    else:
        print(format_result(result, str(args.path)))
    return OK if result.status == "scored" else CHECK_FAILED


def format_result(r: Any, what: str) -> str:
    from orchestrator.scoring import REASONS

    lines = [f"{'scored':<12} {what}  (artifact {(r.artifact_sha256 or '-')[:12]}, train.py {(r.train_sha256 or '-')[:12]})",
             f"{'dataset':<12} {r.dataset}"]
    if r.status == "scored":
        if r.metric not in (None, "auc"):  # a task scored by another metric: its figure first
            se = f" ± {r.score_se:.4g} (SE)" if r.score_se is not None else ""
            lines.append(f"{r.metric.upper():<12} {r.score:.4f}{se}, n {r.n}")
        if r.auc is not None:
            lines += [f"{'AUC':<12} {r.auc:.4f} ± {r.auc_se:.4f} (Hanley-McNeil SE), n {r.n}, {r.positives} positive",
                      f"{'AP':<12} {r.ap:.4f}"]
        lines += [
            f"{'batch check':<12} {r.rows_changed} of {r.rows_checked} rows changed in another batch (largest "
            f"{r.max_abs_change:.3g}, tolerance {r.tolerance:g})" + ("  BATCH DEPENDENT" if r.batch_dependent else ""),
            f"{'seconds':<12} {r.seconds:.1f} (train {r.train_seconds:.1f}, predict {r.predict_seconds:.1f})",
        ]
    else:
        lines += [f"{'status':<12} unscorable: {r.reason} ({REASONS.get(r.reason, '')})",
                  f"{'seconds':<12} {r.seconds:.1f}"]
        if r.detail:
            from orchestrator.log import terminal_safe

            lines += ["", terminal_safe(r.detail.rstrip(), keep_newlines=True)]  # what the scored code printed
    return "\n".join(lines)


def progress_line(p: Progress, data: str) -> str:
    """One rescored pair as its progress line: the score in the task's own metric (an RMSE task has no AUC)."""
    if p.error:
        return f"[{p.done}/{p.total}] {p.run_id} {data}: error: {p.error}"
    r = p.result
    assert r is not None  # rescore reports a pair without an error only once it has its score
    if r.status == "scored":
        value = r.score if r.score is not None else r.auc
        what = f"{(r.metric or 'auc').upper()} {value:.4f}" + (" batch_dependent" if r.batch_dependent else "")
    else:
        what = f"unscorable: {r.reason}"
    return f"[{p.done}/{p.total}] {p.run_id} {data}: {what} ({r.seconds:.1f}s)"


def _rescore(args: argparse.Namespace) -> int:
    """Each run is scored as its lifecycle scores it (orchestrator/run/rescore.py): its own task, budget
    limits and scoring options; only the data set (and where its data lives) is chosen here."""
    from orchestrator.run.rescore import rescore_runs
    from orchestrator.specs import load_task
    from orchestrator.study.status import study_id_of

    if args.parallel < 1:
        raise ConfigError("rescore: --parallel must be at least 1")
    if not args.runs and not args.study:
        raise ConfigError("rescore: name runs with --run RUN_ID (repeatable) or --study S")
    with open_ledger(args) as ledger:
        run_ids = [ledger.find_run(r).run_id for r in args.runs]
        if args.study:
            run_ids += [r.run_id for r in ledger.list_runs(study_id=study_id_of(ledger, args.study))
                        if r.delivered_sha256 is not None and r.status in ("scored", "audited")]
        if not run_ids:
            raise ConfigError("rescore: name runs with --run RUN_ID (repeatable) or --study S")
        tasks = {t.name: t for t in map(load_task, args.tasks)}

        def line(p: Progress) -> str:
            return progress_line(p, args.data)

        if sys.stderr.isatty() and not args.json:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            with Bar(TextColumn("rescore {task.description}"), BarColumn(), MofNCompleteColumn(),
                     TimeElapsedColumn()) as bar:
                tid = bar.add_task(args.data, total=len(set(run_ids)))  # the pairs to score, once skips are known

                def on_progress(p: Progress) -> None:
                    bar.update(tid, completed=p.done, total=p.total)
                    bar.console.print(line(p))

                report = rescore_runs(home(args), ledger, run_ids, args.data, data_dir=args.data_dir,
                                      artifacts=args.artifacts, parallel=args.parallel, on_progress=on_progress,
                                      force=args.force, tasks=tasks)
        else:
            report = rescore_runs(home(args), ledger, run_ids, args.data, data_dir=args.data_dir,
                                  artifacts=args.artifacts, parallel=args.parallel, force=args.force, tasks=tasks,
                                  on_progress=lambda p: print(line(p), file=sys.stderr, flush=True))
    if args.json:
        print_json({"dataset": args.data, "requested": report.requested, "skipped": report.skipped,
                    "scored": {k: v.to_json() for k, v in report.scored.items()}, "errors": report.errors})
    else:
        retry = " (run again to retry them)" if report.errors else ""
        print(f"rescore {args.data}: {len(report.scored)} scored, {len(report.skipped)} already had a score, "
              f"{len(report.errors)} failed{retry}")
    return OK if report.ok else CHECK_FAILED
