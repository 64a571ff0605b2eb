"""`sbx report`: write the HTML report, Markdown summary and CSV tables for a study's runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.failures import ConfigError
from orchestrator.stats import Exclusion


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write the report (HTML, Markdown, CSV tables) for a study or a CSV of runs",
        description="Write report.html (self-contained), summary.md, tables/*.csv and figures/*.png. "
        "Read the runs from --runs-csv (one row per run; columns in orchestrator/report/runs_table.py).",
    )
    p.add_argument("study", nargs="?", help="study name in the ledger (not wired yet: use --runs-csv)")
    p.add_argument("--runs-csv", type=Path, metavar="FILE", help="CSV of runs, one row per run")
    p.add_argument("--out", type=Path, metavar="DIR", help="output folder (default: report-<name> here)")
    p.add_argument("--title", help="report title")
    p.add_argument(
        "--exclusion",
        default=Exclusion.BOTH.value,
        choices=[e.value for e in Exclusion],
        help="compliance rules that exclude a run: nothing, one rule, or both (default: both)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed for every resample (default: 0)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from orchestrator.report import build_report, load_runs_csv

    if args.study and args.runs_csv:
        raise ConfigError("give either a STUDY or --runs-csv FILE, not both")
    if args.study:
        raise ConfigError(
            f"reading study {args.study!r} from the ledger is not available yet; export its runs "
            "to CSV and run `sbx report --runs-csv FILE`"
        )
    if args.runs_csv is None:
        raise ConfigError("nothing to report: give --runs-csv FILE (or a STUDY once the ledger is wired)")
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    runs = load_runs_csv(args.runs_csv)
    out = args.out or Path(f"report-{args.runs_csv.stem}")
    paths = build_report(
        runs,
        out,
        title=args.title or f"sbx report: {args.runs_csv.name}",
        exclusion=args.exclusion,
        seed=args.seed,
        source=str(args.runs_csv),
    )
    for path in paths.all():
        print(path)
    return 0
