"""`sbx show RUN_ID`: one run's ledger record, for people or (with --json) for programs."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from orchestrator.cli.common import add_json, add_ledger, open_ledger, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "show",
        help="show one run's ledger record (a unique prefix of its id will do)",
        description="Show one run's ledger record: state, measurements, events and experiments.",
    )
    p.add_argument("run_id", metavar="RUN_ID", help="a run id, a unique prefix of one, or of its hex tail")
    add_json(p, "the record")
    add_ledger(p)
    p.set_defaults(handler=_show)


def _show(args: argparse.Namespace) -> int:
    from orchestrator.run.record import full_record

    with open_ledger(args) as ledger:
        record = full_record(ledger, ledger.find_run(args.run_id).run_id)
    if args.json:
        print_json(record)
    else:
        print(format_record(record))
    return 0


def format_record(r: dict[str, Any]) -> str:
    """The human form of `Ledger.run_record_json`. Each line of it holds one field: values (notes, reasons,
    event details: what an agent wrote among them) are escaped for the terminal, so no value can move the
    cursor, clear the screen or start a line of its own (a fake "holdout" line, say)."""
    status = r["status"]
    if r["failure_class"]:
        status += f"  {r['failure_class']}: {r['failure_reason']}"
    status += "" if r["counted"] else "  (not counted)"
    lines = [
        ("run", f"{r['run_id']}   repeat {r['repeat']}, attempt {r['attempt']}"),
        ("study", f"{r['study_name']} ({r['study_id']})"),
        ("status", status),
        ("retry of", r["retry_of"]),
        ("pairing", f"{r['pairing']}   agent {r['agent']}"
                    + (f" {r['agent_version']}" if r.get("agent_version") else "") + f", model {_v(r['model'])}"
                    + (f", endpoint {r['endpoint']}" if r.get("endpoint") else "")),
        ("task", f"{r['task']}   budget {r['budget_name']}"),
        ("times", f"created {_t(r['created_at'])}, started {_t(r['started_at'])}, ended {_t(r['ended_at'])}"),
        ("wall", _s(r["wall_seconds"])),
        ("cpu", f"{_s(r['cpu_seconds_metered'])} metered, {_s(r['cpu_seconds_container'])} container"),
        ("experiments", f"{r['experiments_counted']} counted, {r['experiments_refused']} refused"),
        ("stop", f"{_v(r['stop_reason'])}   agent exit code {_v(r['agent_exit_code'])}"),
        ("delivered", f"train.py {_v(r['delivered_sha256'])}   {_v(r['commits'])} commits"),
        ("holdout", _holdout(r)),
        ("eval", _eval(r)),
        *_model_lines(r.get("model_usage")),
        ("compliance", ", ".join(f"{a['rule']} {a['final_verdict']}" for a in r.get("audits", [])) or None),
        ("manifest", r["artifact_manifest"]),
        ("image", r["image"]),
        ("resources", " ".join(f"{k}={v}" for k, v in r["resources"].items()) or None),
        ("placement", f"node {_v(r['node'])}, slot {_v(r['slot'])}, container {_v(r['container_id'])}"),
        ("meta", json.dumps(r["meta"], sort_keys=True) if r["meta"] else None),
    ]
    from orchestrator.log import terminal_safe  # structlog loads only for a command that runs

    out = [terminal_safe(f"{key:<12} {value}") for key, value in lines if value is not None]
    out.append(f"\nevents ({len(r['events'])})")
    for e in r["events"]:
        d = e["detail"]
        if e["kind"] == "transition":
            text = f"{d['from']} -> {d['to']}" + (f"  {d['failure_class']}" if "failure_class" in d else "")
            text += f"  {d['reason']}" if "reason" in d else ""
        else:
            text = json.dumps(d, sort_keys=True) if d else ""
        out.append(terminal_safe(f"  {_t(e['time'])}  {e['kind']:<16} {text}".rstrip()))
    out.append(f"\nexperiments ({len(r['experiments'])})")
    if r["experiments"]:
        out.append(f"  {'n':>3}  {'status':<8} {'reported':>8} {'seconds':>8} {'cpu-s':>8}  {'commit':<12} note")
    for x in r["experiments"]:
        score = f"{x['eval_score']:.4f}" if x["eval_score"] is not None else "-"
        out.append(terminal_safe(
            f"  {_v(x['n']):>3}  {x['status']:<8} {score:>8} {_n(x['seconds']):>8} {_n(x['cpu_seconds']):>8}"
            f"  {_v(x['commit_sha'])[:12]:<12} {x['note'] or ''}".rstrip()
        ))
    return "\n".join(out)


def _model_lines(m: dict[str, Any] | None) -> list[tuple[str, str | None]]:
    """The gateway's measurement of the run's model calls, and the CLI's own report beside it."""
    if not m:
        return []
    calls = f"{m['calls']} ({m['ok']} ok, {m['refused']} refused, {m['provider_errors']} provider errors"
    calls += f", {m['upstream_timeouts']} timeouts)" + ("" if m["closed"] else "   (socket not closed: partial)")
    cost = "unknown (a call had no price)" if m["cost_usd"] is None else f"${m['cost_usd']:.6f}"
    lines: list[tuple[str, str | None]] = [
        ("model calls", calls),
        ("tokens", _tokens(m["input_tokens"], m["cached_input_tokens"], m["cache_write_tokens"], m["output_tokens"],
                           m["reasoning_tokens"]) + "   (gateway)"),
        ("cost", f"{cost}   (rate card of {_v(m['rate_card_date'])})"),
        ("transcript", m["transcript_sha256"]),
    ]
    s = m.get("self_report") or {}
    if s:
        if not s.get("complete"):
            lines.append(("cli report", f"none complete (read from {s.get('read_from', '?')})"))
        else:
            own = _tokens(s["input_tokens"], s["cached_input_tokens"], s["cache_write_tokens"], s["output_tokens"],
                          s["reasoning_tokens"])
            extra = f", {s['calls']} calls" if s.get("calls") is not None else ""
            extra += f", ${s['cost_usd']:.6f}" if s.get("cost_usd") is not None else ", no cost"
            lines.append(("cli report", f"{own}{extra}   ({s.get('source', '')})"))
    return lines


def _tokens(inp: int, cached: int, write: int, out: int, reasoning: int) -> str:
    return f"input {inp} (cached {cached}, cache write {write}), output {out} (reasoning {reasoning})"


def _metric_name(r: dict[str, Any]) -> str:
    """The run's metric as `show` prints it: AUC as it always was, another by its registry name (rmse, ...)."""
    metric = r.get("metric")
    return "AUC" if metric in (None, "auc") else str(metric)


def _holdout(r: dict[str, Any]) -> str | None:
    if r.get("scoring_error"):
        return f"unscorable: {r['scoring_error']}"
    if r.get("holdout_score") is None:
        return None
    text = f"{_metric_name(r)} {r['holdout_score']:.4f}"
    if r.get("holdout_score_se") is not None:
        text += f" (SE {r['holdout_score_se']:.4f})"
    if r.get("holdout_ap") is not None:  # a binary task's, whatever its metric
        text += f", AP {r['holdout_ap']:.4f}"
    return text + ("   batch dependent" if r.get("batch_dependent") else "")


def _eval(r: dict[str, Any]) -> str | None:
    """The eval score sbx computed (what ranks) beside the one the agent printed (its own claim)."""
    if r.get("eval_score") is None and r.get("eval_score_reported") is None:
        return None
    computed = f"{_metric_name(r)} {r['eval_score']:.4f} computed by sbx" if r.get("eval_score") is not None else "not computed"
    reported = r.get("eval_score_reported")
    return computed + (f", {reported:.4f} reported by train.py" if reported is not None else "")


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
