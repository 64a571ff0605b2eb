"""`sbx report`: write the HTML report, Markdown summary and CSV tables for a study's runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.cli.common import add_json, add_ledger, home, open_ledger, print_json
from orchestrator.failures import ConfigError

#: the exclusion choices (orchestrator.stats.Exclusion); spelled out so `sbx --help` does not load the stats
EXCLUSIONS = ("nothing", "eval_labels_in_fit", "frame_statistics", "both")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write the report (HTML, Markdown, CSV tables) for a study or a CSV of runs",
        description="Write report.html (self-contained), summary.md, tables/*.csv and figures/*.png. "
        "Read the runs from --runs-csv (one row per run; columns in orchestrator/report/runs_table.py).",
    )
    p.add_argument("study", nargs="?", help="study name in the ledger (or use --runs-csv for runs made elsewhere)")
    add_ledger(p)
    p.add_argument("--runs-csv", type=Path, metavar="FILE", help="CSV of runs, one row per run")
    p.add_argument("--out", type=Path, metavar="DIR", help="output folder (default: report-<name> here)")
    p.add_argument("--title", help="report title")
    p.add_argument(
        "--exclusion",
        default="both",
        choices=EXCLUSIONS,
        help="compliance rules that exclude a run: nothing, one rule, or both (default: both)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for every resample (default: 0)")
    add_json(p, "the files written")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from orchestrator.report import build_report, load_runs_csv

    if args.study and args.runs_csv:
        raise ConfigError("give either a STUDY or --runs-csv FILE, not both")
    if args.runs_csv is None and not args.study:
        raise ConfigError("nothing to report: give a STUDY name or --runs-csv FILE")
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    if args.study:
        from orchestrator.report import validate_runs
        from orchestrator.study.export import runs_frame, study_id_of

        with open_ledger(args) as ledger:
            runs = validate_runs(runs_frame(ledger, study_id_of(ledger, args.study)), source=f"study {args.study}")
            source = f"study {args.study} in {ledger.path}"
        name = args.study
        out = args.out or home(args).report_dir(args.study)
    else:
        runs = load_runs_csv(args.runs_csv)
        name, source = args.runs_csv.name, str(args.runs_csv)
        out = args.out or Path(f"report-{args.runs_csv.stem}")
    paths = build_report(
        runs,
        out,
        title=args.title or f"sbx report: {name}",
        exclusion=args.exclusion,
        seed=args.seed,
        source=source,
    )
    if args.json:
        print_json({"html": str(paths.html), "files": [str(p) for p in paths.all()]})
    else:
        for path in paths.all():
            print(path)
    return 0
