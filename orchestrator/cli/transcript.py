"""`sbx transcript RUN`: the model calls of a run, as the gateway recorded them.

One line per call (status, outcome, time to first byte and total in seconds, tokens, cost, and what the
model answered); `--html FILE` writes a readable page with each call's new messages, tool calls and results,
the answer, timings and tokens; `--json` prints the calls as JSON. The transcript is the one in the artifact
store named by the run's ledger record (`sbx show RUN`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.cli.common import OK, add_json, add_ledger, home, open_ledger, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transcript", help="a run's model calls: one line each, or a readable page (--html)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_id", metavar="RUN_ID", help="a run id, a unique prefix of one, or of its hex tail")
    p.add_argument("--html", type=Path, default=None, metavar="FILE", help="write a readable page to FILE")
    add_json(p, "the calls")
    add_ledger(p)
    p.set_defaults(handler=_transcript)


def _transcript(args: argparse.Namespace) -> int:
    from orchestrator.artifacts import ArtifactStore
    from orchestrator.diverge.reader import read_transcript
    from orchestrator.failures import LedgerUnavailable
    from orchestrator.report.transcript import call_views, html_page, text_lines

    with open_ledger(args) as ledger:
        run = ledger.find_run(args.run_id)
        usage = ledger.usage.of_run(run.run_id)
    if usage is None or usage.transcript_sha256 is None:
        raise LedgerUnavailable(f"run {run.run_id} has no model transcript (it made no model calls through a "
                                "gateway, or its socket never closed)")
    store = ArtifactStore(home(args).artifacts_dir)
    transcript = read_transcript(store.get_path(usage.transcript_sha256), partial=True)
    views = call_views(transcript.calls)
    summary = {
        "run": run.run_id, "pairing": run.pairing, "agent": f"{run.agent} {usage.agent_version or ''}".strip(),
        "model": usage.model, "endpoint": f"{usage.endpoint} ({usage.api})", "calls": usage.calls,
        "tokens": f"input {usage.input_tokens} (cached {usage.cached_input_tokens}), output {usage.output_tokens} "
                  f"(reasoning {usage.reasoning_tokens})",
        "cost": "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.6f} (rate card of {usage.rate_card_date})",
        "transcript": usage.transcript_sha256 + (" (cut short)" if transcript.truncated else ""),
    }
    if args.html is not None:
        args.html.parent.mkdir(parents=True, exist_ok=True)
        args.html.write_text(html_page(views, title=f"Model calls of run {run.run_id}", summary=summary))
    if args.json:
        print_json({"summary": summary, "calls": [v.to_json() for v in views],
                    "html": str(args.html) if args.html else None})
        return OK
    for key, value in summary.items():
        print(f"{key:<11} {value}")
    print()
    print("\n".join(text_lines(views)))
    if args.html is not None:
        print(f"\nhtml: {args.html}")
    return OK
