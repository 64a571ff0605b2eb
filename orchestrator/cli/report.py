"""`sbx report`: write the HTML report, Markdown summary and CSV tables for a study's runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.cli.common import add_json, add_ledger, home, open_ledger, print_json
from orchestrator.failures import ConfigError

if TYPE_CHECKING:  # the specs load pydantic: imported where a command runs, not when the CLI parses
    from orchestrator.specs.study import ReportSpec

#: `sbx view`'s default address, as orchestrator/report/render.py VIEWER_URL (which loads pandas; a test
#: keeps the two equal)
VIEWER_URL = "http://127.0.0.1:8700/"

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
    p.add_argument(
        "--settings",
        type=Path,
        metavar="FILE",
        help="YAML of what the runs do not say (factors, reference, baseline, budget_cpu_seconds, rate_card, "
        "top_n; the study spec's `report:` block); the flags below override it",
    )
    p.add_argument(
        "--reference",
        action="append",
        default=[],
        metavar="FACTOR=LEVEL",
        help="the level a factor is compared against, e.g. model=glm-5.3-flash (default: first in sorted order)",
    )
    p.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="COLUMN=SCORE",
        help="the starting code's score, e.g. holdout_score=0.7148 or later_score=0.7175",
    )
    p.add_argument("--budget", type=float, metavar="CPU_SECONDS", help="each run's CPU-second budget")
    p.add_argument("--top-n", type=int, metavar="N", help="how many top scores to inspect for rule-breakers")
    p.add_argument("--viewer-url", metavar="URL", default=VIEWER_URL,
                   help=f"the `sbx view` address the report's run ids link to (default {VIEWER_URL}, its own "
                   "default; served by `sbx view`, the report's links go to that viewer whatever this says)")
    add_json(p, "the files written and every table's rows")
    p.set_defaults(handler=_run)


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"{flag} takes NAME=VALUE, got {text!r}")
        out[key.strip()] = value.strip()
    return out


def report_settings(args: argparse.Namespace, stored: dict | None = None) -> ReportSpec:
    """The ReportSpec from the study spec's `report:` block (`stored`), replaced by --settings, then the
    flags (flags win); validated once, errors naming the key."""
    from pydantic import ValidationError

    from orchestrator.specs.loading import load_yaml_model
    from orchestrator.specs.study import ReportSpec

    if args.settings:
        base = load_yaml_model(args.settings, ReportSpec)
    else:
        try:
            base = ReportSpec.model_validate(stored or {})
        except ValidationError as e:
            raise ConfigError(f"the study spec's report block: {e}") from None
    data = base.model_dump()
    data["reference"] = {**data["reference"], **_pairs(args.reference, "--reference")}
    data["baseline"] = {**data["baseline"], **_pairs(args.baseline, "--baseline")}
    for name in data["reference"]:
        if name not in data["factors"]:
            data["factors"] = [*data["factors"], name]
    if args.budget is not None:
        data["budget_cpu_seconds"] = args.budget
    if args.top_n is not None:
        data["top_n"] = args.top_n
    try:
        return ReportSpec.model_validate(data)
    except ValidationError as e:
        lines = [f"report settings: {'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()]
        raise ConfigError("\n".join(lines)) from None


def _run(args: argparse.Namespace) -> int:
    from orchestrator.report import build_report, load_runs_csv

    if args.study and args.runs_csv:
        raise ConfigError("give either a STUDY or --runs-csv FILE, not both")
    if args.runs_csv is None and not args.study:
        raise ConfigError("nothing to report: give a STUDY name or --runs-csv FILE")
    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    if not args.viewer_url.startswith(("http://", "https://")):
        raise ConfigError(f"--viewer-url must start with http:// or https://, got {args.viewer_url!r}")
    if args.study:
        from orchestrator.report import validate_runs
        from orchestrator.report.calibration import study_calibrations
        from orchestrator.study.export import runs_frame
        from orchestrator.study.status import study_id_of

        with open_ledger(args) as ledger:
            study_id = study_id_of(ledger, args.study)
            runs = validate_runs(runs_frame(ledger, study_id), source=f"study {args.study}")
            source = f"study {args.study} in {ledger.path}"
            record = ledger.get_study(study_id)
            settings = report_settings(args, (record.spec if record else {}).get("report"))
            judges = study_calibrations(ledger, runs)
        name = args.study
        out = args.out or home(args).report_dir(args.study)
        measured = True  # the ledger's spend is the gateway's
    else:
        runs = load_runs_csv(args.runs_csv)
        settings = report_settings(args)
        name, source = args.runs_csv.name, str(args.runs_csv)
        out = args.out or Path(f"report-{args.runs_csv.stem}")
        measured = False  # a CSV's spend came from elsewhere
        judges = {}  # a CSV's judge, if any, has no ledger to be calibrated from
    paths = build_report(
        runs,
        out,
        title=args.title or f"sbx report: {name}",
        exclusion=args.exclusion,
        seed=args.seed,
        source=source,
        settings=settings,
        costs_from_gateway=measured,
        judge_calibrations=judges,
        viewer=args.viewer_url,
    )
    if args.json:
        import pandas as pd

        # every table's rows too, so a script gets the figures without reading the CSV files
        tables = {
            name: pd.read_csv(path).astype(object).where(lambda f: f.notna(), None).to_dict(orient="records")
            for name, path in paths.tables.items()
        }
        print_json({"html": str(paths.html), "files": [str(p) for p in paths.all()], "tables": tables})
    else:
        for path in paths.all():
            print(path)
    return 0
