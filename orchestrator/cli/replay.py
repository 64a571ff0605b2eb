"""`sbx replay RUN --call N [--call M ...] --times K --limit-usd L`: send stored requests of a run again.

Each stored request (the body the gateway forwarded, byte for byte) goes K times through a gateway to the
run's endpoint and model (or `--endpoint`/`--model`), under the spend limit `--limit-usd` (refused before
the first call when the originals' cost x K is over it; enforced by the gateway as a run's limit). Printed
per call: how many distinct answers, the share identical to the original, the first differences (class and
character position), backend fingerprints when the API returns them, latency, tokens and cost. The replays'
transcript goes to the artifact store and the replay to the ledger's `replays` table (never the run's own
usage). docs/divergence.md, "Replay".
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from orchestrator.cli.common import OK, add_json, add_ledger, home, open_ledger, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="send a run's stored model requests again, K times, and compare the answers",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_id", metavar="RUN_ID", help="a run id, a unique prefix of one, or of its hex tail")
    p.add_argument("--call", type=int, action="append", required=True, metavar="N",
                   help="index of the call in the run's transcript (repeat for a set of calls)")
    p.add_argument("--times", type=int, required=True, metavar="K", help="replays of each call")
    p.add_argument("--limit-usd", type=float, required=True, metavar="L", help="spend limit for all the replays")
    p.add_argument("--endpoint", help="endpoint to send to (default: the run's)")
    p.add_argument("--model", help="model to send to (default: the run's)")
    p.add_argument("--endpoints", type=Path, default=Path("endpoints.yaml"), help="default ./endpoints.yaml")
    p.add_argument("--ratecards", type=Path, default=Path("ratecards"), help="default ./ratecards")
    add_json(p, "the replay's summary")
    add_ledger(p)
    p.set_defaults(handler=_replay)


def _replay(args: argparse.Namespace) -> int:
    from orchestrator.artifacts import ArtifactStore
    from orchestrator.diverge.replay import replay_calls, replay_id
    from orchestrator.failures import ConfigError, LedgerUnavailable
    from orchestrator.gateway.server import Gateway
    from orchestrator.gateway.service import GatewayThread
    from orchestrator.gateway.transcript import read_transcript
    from orchestrator.ledger.replays import ReplayRow
    from orchestrator.specs.endpoints import load_endpoints, load_ratecards

    if args.limit_usd < 0:
        raise ConfigError("--limit-usd must be at least 0")
    with open_ledger(args) as ledger:
        run = ledger.find_run(args.run_id)
        usage = ledger.model_usage(run.run_id)
    if usage is None or usage.transcript_sha256 is None:
        raise LedgerUnavailable(f"run {run.run_id} has no model transcript: no stored request to replay")
    store = ArtifactStore(home(args).artifacts_dir)
    records = read_transcript(store.get_path(usage.transcript_sha256))
    endpoints = load_endpoints(args.endpoints)
    name, model = args.endpoint or usage.endpoint, args.model or usage.model
    if name not in endpoints:
        raise ConfigError(f"{args.endpoints}: no endpoint {name!r} (the replay's endpoint; --endpoint)")
    cards = load_ratecards(args.ratecards) if args.ratecards.is_dir() else None
    rid = replay_id(run.run_id)
    with tempfile.TemporaryDirectory(prefix="sbx-replay-") as tmp:
        transcript = Path(tmp) / "replay.jsonl.gz"
        with GatewayThread(Gateway({name: endpoints[name]}, socket_root=Path(tmp) / "sock", ratecards=cards)) as gw:
            results, totals = replay_calls(gw, records, args.call, args.times, endpoint=name, model=model,
                                           limit_usd=args.limit_usd, transcript_path=transcript,
                                           seed=getattr(run, "seed", None), run_id=rid)
        sha = store.put_file(transcript)
    summary = {"replay": rid, "run": run.run_id, "endpoint": name, "model": model, "times": args.times,
               "limit_usd": args.limit_usd, "calls": [r.summary() for r in results],
               "refused": totals.refused, "cost_usd": totals.cost_usd}
    with open_ledger(args) as ledger:
        ledger.save_replay(ReplayRow(rid, run.run_id, time.time(), name, model, tuple(args.call), args.times,
                                     args.limit_usd, totals.calls, totals.cost_usd, sha, summary))
    if args.json:
        print_json({**summary, "transcript": sha})
        return OK
    print(f"replay {rid} of run {run.run_id}: {name} / {model}, {args.times} times, limit ${args.limit_usd:.6f}")
    print(f"{'call':>5} {'ok':>4} {'distinct':>8} {'identical':>9} {'differences':<40} {'median s':>9} {'cost $':>10}")
    for r in results:
        s = r.summary()
        diffs = ", ".join(f"{k} {v}" for k, v in sorted(r.differences.items())) or "-"
        share = "-" if s["share_identical"] is None else f"{s['share_identical']:.0%}"
        med = "-" if s["latency_median_s"] is None else f"{s['latency_median_s']:.3f}"
        print(f"{r.index:>5} {r.ok:>4} {r.distinct:>8} {share:>9} {diffs:<40} {med:>9} {r.cost_usd:>10.6f}")
        if r.first_positions:
            print(f"      first differences at characters {sorted(set(r.first_positions))}")
        if s["fingerprints"]:
            print(f"      backend fingerprints {s['fingerprints']}")
    print(f"total cost ${totals.cost_usd:.6f}; refused {totals.refused}; transcript {sha or '-'}")
    return OK
