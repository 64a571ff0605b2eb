"""`sbx replay RUN --call N [--call M ...] --times K --limit-usd L [--compare]`: send stored requests of a
run again; `sbx replay RUN --compare`: compare the run's stored replays, sending nothing.

Each stored request (the body the gateway forwarded, byte for byte) goes K times through a gateway to the
run's endpoint and model (or `--endpoint`/`--model`), under the spend limit `--limit-usd` (refused before
the first call when the originals' cost x K is over it; enforced by the gateway as a run's limit). Printed
per call: how many distinct answers, the share identical to the original, the first differences (class and
character position), backend fingerprints when the API returns them, latency, tokens and cost. The replays'
transcript goes to the artifact store and the replay to the ledger's `replays` table (never the run's own
usage). With `--compare`, each replayed response is also compared with the original after `sbx diverge`'s
normalisation (diverge/replayed.py: ids, timestamps and stream padding to placeholders, usage and pings
left out; `--as-recorded` compares the bytes as recorded): distinct normalised responses, how many equal the
original's, and per differing replay its first difference (location, class, character position); without
`--call` it reads every stored replay of the run. docs/divergence.md, "Replay".
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from orchestrator.cli.common import OK, add_json, add_ledger, home, open_ledger, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("replay", help="send a run's stored model requests again, K times, and compare the answers",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_id", metavar="RUN_ID", help="a run id, a unique prefix of one, or of its hex tail")
    p.add_argument("--call", type=int, action="append", metavar="N",
                   help="index of the call in the run's transcript (repeat for a set of calls)")
    p.add_argument("--times", type=int, metavar="K", help="replays of each call (with --call)")
    p.add_argument("--limit-usd", type=float, metavar="L", help="spend limit for all the replays (with --call)")
    p.add_argument("--compare", action="store_true",
                   help="compare the replays with the original after sbx diverge's normalisation (without "
                        "--call: every stored replay of the run, nothing sent)")
    p.add_argument("--as-recorded", action="store_true",
                   help="with --compare: no normalisation (ids, timestamps, usage as recorded)")
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
    from orchestrator.gateway.thread import GatewayThread
    from orchestrator.gateway.transcript import read_transcript
    from orchestrator.ledger.replays import ReplayRow
    from orchestrator.specs.endpoints import load_endpoints, load_ratecards

    if not args.call:
        if not args.compare:
            raise ConfigError("give --call N (with --times and --limit-usd) to replay, or --compare to compare "
                              "the run's stored replays")
        return _compare(args, None)
    if args.times is None or args.limit_usd is None:
        raise ConfigError("--call needs --times K and --limit-usd L")
    if args.limit_usd < 0:
        raise ConfigError("--limit-usd must be at least 0")
    with open_ledger(args) as ledger:
        run = ledger.find_run(args.run_id)
        usage = ledger.usage.of_run(run.run_id)
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
    import tempfile  # here: every command's parser imports this module

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
        ledger.replays.save(ReplayRow(rid, run.run_id, time.time(), name, model, tuple(args.call), args.times,
                                     args.limit_usd, totals.calls, totals.cost_usd, sha, summary))
    if args.compare:  # the replay's own table first, then the normalised comparison
        if not args.json:
            _print_replay(rid, run.run_id, name, model, args.times, args.limit_usd, results, totals, sha)
        return _compare(args, rid, {**summary, "transcript": sha} if args.json else None)
    if args.json:
        print_json({**summary, "transcript": sha})
        return OK
    _print_replay(rid, run.run_id, name, model, args.times, args.limit_usd, results, totals, sha)
    return OK


def _print_replay(rid: str, run_id: str, name: str, model: str, times: int, limit_usd: float, results: Any,
                  totals: Any, sha: str | None) -> None:
    print(f"replay {rid} of run {run_id}: {name} / {model}, {times} times, limit ${limit_usd:.6f}")
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


def _compare(args: argparse.Namespace, only: str | None, replayed: dict[str, Any] | None = None) -> int:
    """Print (or --json) the run's stored replays (`only`: that one) compared after diverge's normalisation."""
    from orchestrator.artifacts import ArtifactStore
    from orchestrator.diverge.normalise import AS_RECORDED, DEFAULT
    from orchestrator.diverge.replayed import stored_replays
    from orchestrator.failures import ConfigError

    normalisation = AS_RECORDED if args.as_recorded else DEFAULT
    with open_ledger(args) as ledger:
        run = ledger.find_run(args.run_id)
        if not ledger.replays.of_run(run.run_id):
            raise ConfigError(f"run {run.run_id} has no stored replay to compare (sbx replay RUN --call N ...)")
        found = stored_replays(ledger, ArtifactStore(home(args).artifacts_dir), run.run_id, normalisation)
    found = [(row, calls) for row, calls in found if only is None or row.replay_id == only]
    if not found:
        raise ConfigError(f"run {run.run_id} has no stored replay to compare (sbx replay RUN --call N ...)")
    doc = [{"replay": row.replay_id, "endpoint": row.endpoint, "model": row.model, "times": row.times,
            "cost_usd": row.cost_usd, "transcript": row.transcript_sha256, "calls": [c.summary() for c in calls]}
           for row, calls in found]
    if args.json:
        print_json({"run": run.run_id, "normalisation": "as recorded" if args.as_recorded else "sbx diverge's",
                    "replays": doc, **({"replayed": replayed} if replayed else {})})
        return OK
    what = "as recorded (no normalisation)" if args.as_recorded else "after sbx diverge's normalisation"
    for row, calls in found:
        print(f"replay {row.replay_id} of run {run.run_id}: {row.endpoint} / {row.model}, {row.times} times, "
              f"cost ${row.cost_usd or 0.0:.6f}; compared {what}")
        print(f"{'call':>5} {'answered':>8} {'distinct':>8} {'identical':>9}  classes")
        for c in calls:
            s = c.summary()
            classes = ", ".join(f"{k} {v}" for k, v in s["classes"].items()) or "-"
            print(f"{c.index:>5} {c.answered:>8} {c.distinct:>8} {c.identical_to_original:>9}  {classes}")
            firsts = Counter((d.where, d.difference_class, d.position) for d in c.differences if d is not None)
            for (where, cls, pos), n in sorted(firsts.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][2] or 0)):
                at = "" if pos is None else f" at character {pos}"
                print(f"      {n:>4} x first differ at {where} ({cls}){at}")
    return OK
