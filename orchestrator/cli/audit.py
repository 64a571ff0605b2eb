"""`sbx audit`: check delivered train.py files against the compliance rules.

    sbx audit PATH... [--json]                     audit files or folders (every *.py under a folder)
    sbx audit --study S [--ledger FILE] [--json]   audit every delivered run of a study again, store the records
    sbx audit review RUN RULE --verdict clear|flagged --reason "..." [--ledger FILE]

Exit status: 0 when every record is clear (after overrides, for --study), 1 when any record is flagged or
could not be decided (a file that does not parse), 2 on a usage or input error, 3 when the ledger is busy.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from orchestrator.cli.common import CHECK_FAILED, OK, add_json, add_ledger, home, open_ledger, print_json
from orchestrator.failures import ConfigError

_JSON_FIELDS = ("file", "rule", "rule_version", "verdict", "evidence")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "audit",
        help="audit train.py files: evaluation data in a fit, statistics of the scored batch",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or folders to audit; or `review RUN RULE` to record a reviewer's verdict",
    )
    add_json(p, "the records (a list, one object per (file or run, rule))")
    p.add_argument("--study", metavar="S", help="audit every delivered run of study S again and store the records")
    add_ledger(p)
    p.add_argument("--verdict", choices=["clear", "flagged"], help="review: the reviewer's verdict")
    p.add_argument("--reason", help="review: why (required)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.paths and args.paths[0] == "review":
        return _review(args, args.paths[1:])
    if args.verdict is not None or args.reason is not None:
        raise ConfigError("--verdict and --reason belong to `sbx audit review RUN RULE`")
    if args.study is not None:
        if args.paths:
            raise ConfigError("give either PATH... or --study, not both")
        return _study(args)
    if not args.paths:
        raise ConfigError("nothing to audit: give PATH... or --study S")
    from orchestrator.compliance.audit import audit_paths
    from orchestrator.compliance.traces import REPORTED_ONLY

    records = audit_paths(args.paths)
    _print(records, as_json=args.json)
    # rules outside the default exclusion (eval_features_in_fit) are printed but do not fail the audit
    deciding = [r for r in records if r.rule not in REPORTED_ONLY]
    return OK if all(r.final_verdict == "clear" for r in deciding) else CHECK_FAILED


def _study(args: argparse.Namespace) -> int:
    from orchestrator.compliance.records import is_compliant
    from orchestrator.compliance.store import load_records
    from orchestrator.run.audit import reaudit_study

    with open_ledger(args) as ledger:
        audited = reaudit_study(home(args), ledger, args.study)
        final = {run_id: load_records(ledger, run_id) for run_id in audited}
    records = [r for rs in final.values() for r in rs]
    _print(records, as_json=args.json)
    if not args.json:
        passing = sum(is_compliant(rs) for rs in final.values())
        print(f"{passing} of {len(final)} runs compliant")
    return OK if all(is_compliant(rs) for rs in final.values()) else CHECK_FAILED


def _review(args: argparse.Namespace, rest: Sequence[str]) -> int:
    from orchestrator.compliance.store import add_override

    if len(rest) != 2:
        raise ConfigError('usage: sbx audit review RUN RULE --verdict clear|flagged --reason "..."')
    if args.verdict is None or not (args.reason or "").strip():
        raise ConfigError("sbx audit review needs --verdict clear|flagged and a non-empty --reason")
    run_id, rule = rest
    with open_ledger(args) as ledger:
        run_id = ledger.find_run(run_id).run_id
        override = add_override(ledger, run_id, rule, args.verdict, args.reason)
    if args.json:
        print_json({"run_id": run_id, "rule": rule, **override.model_dump(mode="json")})
    else:
        print(f"{run_id} {rule}: reviewer verdict {override.verdict} ({override.reason})")
    return OK


def _print(records: Sequence[object], *, as_json: bool) -> None:
    from orchestrator.compliance.records import AuditRecord

    rows = [r for r in records if isinstance(r, AuditRecord)]
    if as_json:
        payload = [r.model_dump(mode="json", include=set(_JSON_FIELDS)) for r in rows]
        for item, record in zip(payload, rows, strict=True):
            if record.run_id is not None:
                item["run_id"] = record.run_id
            if record.notes:
                item["notes"] = record.notes
            if record.override is not None:
                item["override"] = record.override.model_dump(mode="json")
                item["final_verdict"] = record.final_verdict
        print_json(payload)
        return
    width = max((len(r.file or r.run_id or "") for r in rows), default=4)
    print(f"{'FILE':<{width}}  {'RULE':<20} {'V':>2}  {'VERDICT':<8} EVIDENCE")
    for r in rows:
        where = r.file or r.run_id or ""
        verdict = r.final_verdict + ("*" if r.override is not None else "")
        first = r.evidence[0].summary if r.evidence else (r.notes[0] if r.notes else "")
        print(f"{where:<{width}}  {r.rule:<20} {r.rule_version:>2}  {verdict:<8} {first}")
