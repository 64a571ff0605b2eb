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
    p.add_argument("study", nargs="?", help="study name in the ledger (or use --runs-csv for runs made elsewhere)")
    p.add_argument("--ledger", type=Path, default=None, help="ledger file (default: $SBX_HOME/ledger.sqlite)")
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
    if args.runs_csv is None and not args.study:
        raise ConfigError("nothing to report: give a STUDY name or --runs-csv FILE")
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    if args.study:
        from orchestrator import paths as sbx_paths
        from orchestrator.ledger import Ledger
        from orchestrator.report import validate_runs
        from orchestrator.study.export import runs_frame, study_id_of

        with Ledger(args.ledger, create=False) as ledger:
            runs = validate_runs(runs_frame(ledger, study_id_of(ledger, args.study)), source=f"study {args.study}")
        name, source = args.study, f"study {args.study} in {args.ledger or 'the ledger'}"
        out = args.out or sbx_paths.sbx_home() / "reports" / args.study
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
    for path in paths.all():
        print(path)
    return 0
