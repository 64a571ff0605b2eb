"""`sbx diverge`: why identical runs differ, paired outcome by outcome and call by call (docs/divergence.md).

    sbx diverge plan STUDY DEFINITIONS.yaml        file the definitions with the study, before its runs
    sbx diverge STUDY --arms A B [--control C]     pair two arms by (task, repeat), compare, report, store
    sbx diverge --pairs-csv FILE [--transcripts DIR]   a study made elsewhere: paired outcomes from a CSV

STUDY in `plan` is a study name in the ledger or a STUDY.yaml (recorded in the ledger if it is not yet).
An arm is a PAIRING of STUDY or STUDY:PAIRING of another study. Exit codes: 0 written, 2 a usage, config or
data error (no such study, arms with different tasks, a cause without a base-rate control), 3 infrastructure.
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator.cli.common import OK, add_json, add_ledger, home, open_ledger, print_json
from orchestrator.cli.report import VIEWER_URL
from orchestrator.failures import ConfigError

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diverge",
        help="paired runs: why identical runs differ (plan: file the definitions first)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="sbx diverge plan STUDY DEFINITIONS.yaml | sbx diverge STUDY --arms A B [options] | "
        "sbx diverge --pairs-csv FILE [options]",
    )
    p.add_argument("words", nargs="*", metavar="STUDY", help=argparse.SUPPRESS)
    p.add_argument("--arms", nargs=2, metavar=("A", "B"), help="the two arms: PAIRING or STUDY:PAIRING")
    p.add_argument("--control", metavar="C", help="a different-seed control arm, paired with arm A")
    p.add_argument(
        "--definitions",
        type=Path,
        metavar="FILE",
        help="definitions to use (default: the latest filed); unfiled ones make everything exploratory",
    )
    p.add_argument(
        "--transcripts",
        type=Path,
        metavar="DIR",
        help="transcripts named by run id (RUN_ID.jsonl.gz), before those in the artifact store",
    )
    p.add_argument("--pairs-csv", type=Path, metavar="FILE", help="paired outcomes of a study made elsewhere")
    p.add_argument(
        "--pair",
        metavar="TASK:REPEAT",
        help="the pair shown side by side (default: an early one that diverged and disagrees)",
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="report folder (default: HOME/reports/...)")
    p.add_argument("--seed", type=int, default=0, help="seed of every resample (default: 0)")
    p.add_argument("--no-store", action="store_true", help="do not store the analysis in the ledger")
    add_ledger(p)
    add_json(p, "the analysis")
    p.set_defaults(handler=_run)


def _when(t: float | None) -> str:
    return "not yet" if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def _plan(args: argparse.Namespace, words: list[str]) -> int:
    from orchestrator.study.divergence import file_definitions

    if len(words) != 2:
        raise ConfigError("usage: sbx diverge plan STUDY DEFINITIONS.yaml")
    with open_ledger(args, create=True) as ledger:
        filed, new, name, started = file_definitions(ledger, words[0], Path(words[1]))
        versions = len(ledger.divergence.filed(filed.study_id))
    before = started is None or filed.filed_at < started
    if args.json:
        print_json(
            {
                "study": name,
                "version": filed.version,
                "new": new,
                "versions": versions,
                "sha256": filed.sha256,
                "filed_at": filed.filed_at,
                "first_run_started": started,
                "preregistered": before,
                "definitions": filed.definitions,
            }
        )
        return OK
    what = "filed as version" if new else "unchanged: already filed as version"
    print(
        f"study {name}: definitions {what} {filed.version} of {versions} ({filed.sha256[:12]}), "
        f"filed {_when(filed.filed_at)}"
    )
    if before:
        print(
            "no run of the study has started: an analysis under these definitions counts as declared before the runs"
        )
    else:
        print(
            f"the study's first run started {_when(started)}: an analysis under this version is exploratory"
        )
    return OK


def _pair_key(text: str | None) -> tuple[str, int] | None:
    if text is None:
        return None
    task, sep, repeat = text.rpartition(":")
    if not sep or not task or not repeat.lstrip("-").isdigit():
        raise ConfigError(f"--pair {text!r}: give TASK:REPEAT")
    return task, int(repeat)


def _chosen(result: Any, key: tuple[str, int] | None) -> Any:
    """The pair to show: the one asked for, else an early diverged pair whose outcomes disagree."""
    main = [
        p
        for p in result.pairs
        if p.a.seed == p.b.seed
        and p.comparison is not None
        and p.a.run_id in result.transcript_of
        and p.b.run_id in result.transcript_of
    ]
    if key is not None:
        found = next((p for p in main if (p.task, p.repeat) == key), None)
        if found is None:
            raise ConfigError(f"--pair {key[0]}:{key[1]}: no same-seed pair with both transcripts there")
        return found

    def rank(p: Any) -> tuple:
        disagree = p.a.outcome is not None and p.b.outcome is not None and p.a.outcome != p.b.outcome
        first = p.comparison.first_divergence
        return (first is None, not disagree, first if first is not None else 0, p.task, p.repeat)

    return min(main, key=rank, default=None)


def _view(result: Any, key: tuple[str, int] | None) -> Any:
    from orchestrator.diverge.reader import read_transcript
    from orchestrator.diverge.view import pair_view

    pair = _chosen(result, key)
    if pair is None:
        return None
    a = read_transcript(result.transcript_of[pair.a.run_id], partial=True)
    b = read_transcript(result.transcript_of[pair.b.run_id], partial=True)
    return pair_view(pair.task, pair.repeat, pair.a.run_id, pair.b.run_id, a.calls, b.calls, pair.comparison)


def _analyse(args: argparse.Namespace, words: list[str]) -> int:
    from orchestrator.artifacts import ArtifactStore
    from orchestrator.diverge.export import analysis_json
    from orchestrator.report.divergence import DivergenceReportInput, write_divergence_report
    from orchestrator.study.divergence import analyse_arms, analyse_imported, pairs_json

    if args.seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {args.seed}")
    key = _pair_key(args.pair)
    if args.pairs_csv is not None:
        if words or args.arms or args.control:
            raise ConfigError("--pairs-csv takes no STUDY, --arms or --control (the CSV holds the pairs)")
        result = analyse_imported(
            args.pairs_csv, definitions_path=args.definitions, transcripts=args.transcripts, seed=args.seed
        )
        name, source = args.pairs_csv.stem, f"paired outcomes {args.pairs_csv}"
        out = args.out or Path(f"diverge-{_SAFE.sub('-', args.pairs_csv.stem)}")
        check: dict[str, int] = {}
    else:
        if len(words) != 1 or not args.arms:
            raise ConfigError(
                "usage: sbx diverge STUDY --arms A B [--control C] (or sbx diverge plan STUDY FILE)"
            )
        study = words[0]
        a, b = args.arms
        with open_ledger(args) as ledger:
            result = analyse_arms(
                ledger,
                ArtifactStore(home(args).artifacts_dir),
                study,
                a,
                b,
                control=args.control,
                definitions_path=args.definitions,
                transcripts=args.transcripts,
                seed=args.seed,
                store_result=not args.no_store,
            )
            source = f"study {study} in {ledger.path}, arms {a} and {b}" + (
                f", control {args.control}" if args.control else ""
            )
        name = f"{study}: {a} vs {b}"
        out = args.out or home(args).report_dir(_SAFE.sub("-", f"{study}.diverge.{a}.{b}"))
        check = result.arms.check_json()["counts"] if result.arms else {}
    extra = DivergenceReportInput(
        source=source,
        definitions_note=result.definitions.note,
        pair_check=check,
        problems=tuple(result.problems),
        pair=_view(result, key),
        viewer=VIEWER_URL if args.pairs_csv is None else None,  # a study's runs are the ledger's, in `sbx view`
    )
    paths = write_divergence_report(result.analysis, extra, out, title=f"sbx diverge: {name}")
    if args.json:
        print_json(
            {
                "analysis": analysis_json(result.analysis),
                "definitions_used": result.definitions.to_json(),
                "pair_check": result.arms.check_json() if result.arms else None,
                "problems": result.problems,
                "pairs": pairs_json(result.pairs),
                "stored_id": result.stored_id,
                "report": {"html": str(paths.html), "files": [str(p) for p in paths.all()]},
            }
        )
        return OK
    analysis = result.analysis
    print(
        f"{analysis.check.pairs} pairs ({analysis.check.same_seed} same seed, {analysis.check.different_seed} "
        f"different seed); {result.definitions.note}"
    )
    table = analysis.outcome_table.value
    if table is not None:
        print(
            f"outcomes: both {table.both}, A only {table.first_only}, B only {table.second_only}, neither "
            f"{table.neither}; McNemar p = {table.mcnemar_p:.3f}; disagreement {table.disagreement:.1%}"
        )
    if analysis.divergence_classes.value is not None:
        print(
            "first divergence: " + ", ".join(f"{k} {v}" for k, v in analysis.divergence_classes.value.items())
        )
    for line in (*analysis.warnings, *result.problems):
        print(f"note: {line}")
    if result.stored_id is not None:
        print(f"stored as analysis {result.stored_id}")
    print(paths.html)
    return OK


def _run(args: argparse.Namespace) -> int:
    words = list(args.words)
    if words and words[0] == "plan":
        if args.arms or args.control or args.pairs_csv:
            raise ConfigError("sbx diverge plan takes STUDY and DEFINITIONS.yaml only")
        return _plan(args, words[1:])
    return _analyse(args, words)
