"""`sbx endpoints check NAME`: one tiny call to a configured model endpoint through the gateway."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from orchestrator.cli.common import CHECK_FAILED, OK, add_json, print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("endpoints", help="model endpoints (endpoints.yaml) and their rate cards")
    ep_sub = p.add_subparsers(dest="endpoints_command", required=True, metavar="SUBCOMMAND")
    check = ep_sub.add_parser(
        "check",
        help="make one tiny call to an endpoint and print what came back and what it cost",
        description="Start a gateway, make one tiny call to the endpoint through it (the key is read from the "
        "endpoint's key_env or key_file and never printed), print the answer, the usage the gateway parsed and "
        "its cost at today's rate card.",
    )
    check.add_argument("name", metavar="NAME", help="endpoint name in the endpoints file")
    check.add_argument("--model", help="model to call (default: the endpoint's first listed model)")
    check.add_argument("--endpoints", type=Path, default=Path("endpoints.yaml"), help="default ./endpoints.yaml")
    check.add_argument("--ratecards", type=Path, default=Path("ratecards"), help="default ./ratecards")
    check.add_argument("--transcript", type=Path, help="keep the call's transcript here (gzip JSONL)")
    add_json(check, "what came back")
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    from orchestrator.failures import ConfigError
    from orchestrator.gateway.probe import probe
    from orchestrator.gateway.server import Gateway
    from orchestrator.gateway.thread import GatewayThread
    from orchestrator.specs.endpoints import endpoint, load_endpoints, load_ratecards

    endpoints = load_endpoints(args.endpoints)
    ep = endpoint(endpoints, args.name)
    model = args.model or (ep.models[0] if ep.models else None)
    if not model:
        raise ConfigError(f"endpoint {ep.name} lists no models: give --model")
    cards = load_ratecards(args.ratecards) if args.ratecards.is_dir() else None
    import tempfile  # here: every command's parser imports this module

    with tempfile.TemporaryDirectory(prefix="sbx-check-") as tmp:
        transcript = args.transcript or Path(tmp) / "check.jsonl.gz"
        with GatewayThread(Gateway({ep.name: ep}, socket_root=Path(tmp), ratecards=cards)) as gw:
            result = gw.call(probe(gw.gateway, ep.name, model, transcript, run_id="check"))
    if args.json:
        print_json({"endpoint": ep.name, "api": ep.api, "base_url": ep.base_url, "model": model,
                    "status": result.status, "outcome": result.outcome, "seconds": result.seconds,
                    "answer": result.text, "error": result.error, "usage": result.usage,
                    "cost_usd": result.cost_usd, "rate_card_date": dt.date.today().isoformat()})
        return OK if result.outcome == "ok" else CHECK_FAILED
    print(f"endpoint {ep.name} ({ep.api}) {ep.base_url}  model {model}")
    print(f"status   {result.status}  {result.outcome}  {result.seconds * 1000:.0f} ms")
    if result.text is not None:
        print(f"answer   {result.text!r}")
    if result.error:
        print(f"error    {result.error}")
    if result.usage:
        u = result.usage
        print(f"tokens   input {u['input']} (cached {u['cached_input']}, cache write {u['cache_write']})  "
              f"output {u['output']} (reasoning {u['reasoning']})")
    if result.cost_usd is not None:
        print(f"cost     ${result.cost_usd:.6f}  (rate card of {dt.date.today().isoformat()})")
    elif result.usage:
        print(f"cost     unknown: no rate card prices {model} today")
    return OK if result.outcome == "ok" else CHECK_FAILED
