"""`sbx show RUN_ID`: one run's ledger record, for people or (with --json) for programs."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "show",
        help="show one run's ledger record (a unique prefix of its id will do)",
        description="Show one run's ledger record: state, measurements, events and experiments.",
    )
    p.add_argument("run_id", metavar="RUN_ID", help="a run id, a unique prefix of one, or of its hex tail")
    p.add_argument("--json", action="store_true", help="print the record as exactly one JSON object")
    p.add_argument("--ledger", type=Path, default=None, help="ledger file (default: $SBX_HOME/ledger.sqlite)")
    p.set_defaults(handler=_show)


def _show(args: argparse.Namespace) -> int:
    from orchestrator.ledger import Ledger
    from orchestrator.run.record import full_record

    with Ledger(args.ledger, create=False) as ledger:
        record = full_record(ledger, ledger.find_run(args.run_id).run_id)
    print(json.dumps(record, indent=2) if args.json else format_record(record))
    return 0


def format_record(r: dict[str, Any]) -> str:
    """The human form of `Ledger.run_record_json`."""
    status = r["status"]
    if r["failure_class"]:
        status += f"  {r['failure_class']}: {r['failure_reason']}"
    status += "" if r["counted"] else "  (not counted)"
    lines = [
        ("run", f"{r['run_id']}   repeat {r['repeat']}, attempt {r['attempt']}"),
        ("study", f"{r['study_name']} ({r['study_id']})"),
        ("status", status),
        ("retry of", r["retry_of"]),
        ("pairing", f"{r['pairing']}   agent {r['agent']}, model {_v(r['model'])}"),
        ("task", f"{r['task']}   budget {r['budget_name']}"),
        ("times", f"created {_t(r['created_at'])}, started {_t(r['started_at'])}, ended {_t(r['ended_at'])}"),
        ("wall", _s(r["wall_seconds"])),
        ("cpu", f"{_s(r['cpu_seconds_metered'])} metered, {_s(r['cpu_seconds_container'])} container"),
        ("experiments", f"{r['experiments_counted']} counted, {r['experiments_refused']} refused"),
        ("stop", f"{_v(r['stop_reason'])}   agent exit code {_v(r['agent_exit_code'])}"),
        ("delivered", f"train.py {_v(r['delivered_sha256'])}   {_v(r['commits'])} commits"),
        ("holdout", _holdout(r)),
        ("compliance", ", ".join(f"{k} {v}" for k, v in r.get("compliance", {}).items()) or None),
        ("manifest", r["artifact_manifest"]),
        ("image", r["image"]),
        ("resources", " ".join(f"{k}={v}" for k, v in r["resources"].items()) or None),
        ("placement", f"node {_v(r['node'])}, slot {_v(r['slot'])}, container {_v(r['container_id'])}"),
        ("meta", json.dumps(r["meta"], sort_keys=True) if r["meta"] else None),
    ]
    out = [f"{key:<12} {value}" for key, value in lines if value is not None]
    out.append(f"\nevents ({len(r['events'])})")
    for e in r["events"]:
        d = e["detail"]
        if e["kind"] == "transition":
            text = f"{d['from']} -> {d['to']}" + (f"  {d['failure_class']}" if "failure_class" in d else "")
            text += f"  {d['reason']}" if "reason" in d else ""
        else:
            text = json.dumps(d, sort_keys=True) if d else ""
        out.append(f"  {_t(e['time'])}  {e['kind']:<16} {text}".rstrip())
    out.append(f"\nexperiments ({len(r['experiments'])})")
    if r["experiments"]:
        out.append(f"  {'n':>3}  {'status':<8} {'eval':>8} {'seconds':>8} {'cpu-s':>8}  {'commit':<12} note")
    for x in r["experiments"]:
        score = f"{x['eval_score']:.4f}" if x["eval_score"] is not None else "-"
        out.append(
            f"  {_v(x['n']):>3}  {x['status']:<8} {score:>8} {_n(x['seconds']):>8} {_n(x['cpu_seconds']):>8}"
            f"  {_v(x['commit_sha'])[:12]:<12} {x['note'] or ''}".rstrip()
        )
    return "\n".join(out)


def _holdout(r: dict[str, Any]) -> str | None:
    if r.get("scoring_error"):
        return f"unscorable: {r['scoring_error']}"
    if r.get("holdout_auc") is None:
        return None
    text = f"AUC {r['holdout_auc']:.4f} (SE {r['holdout_auc_se']:.4f}), AP {r['holdout_ap']:.4f}"
    return text + ("   batch dependent" if r.get("batch_dependent") else "")


def _v(value: object) -> str:
    return "-" if value is None else str(value)


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _s(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f} s"


def _t(unix: float | None) -> str:
    return (
        "-" if unix is None else datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"
    )
