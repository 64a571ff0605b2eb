"""`sbx model serve`: the stand-in model, a scripted server of the three wire APIs for tests and demos."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    from orchestrator.paths import DEFAULT_SCENARIO, SCENARIOS_DIR, shipped_scenarios

    shipped = ", ".join(shipped_scenarios()) or "none"
    p = sub.add_parser("model", help="the stand-in model for tests and demos")
    model_sub = p.add_subparsers(dest="model_command", required=True, metavar="SUBCOMMAND")
    serve = model_sub.add_parser(
        "serve",
        help="serve a scenario over Anthropic Messages, OpenAI Chat Completions and Responses",
        description="Play a scenario (YAML: steps of `shell` or `finish`) to any agent CLI that calls this "
        "server; every call is logged as one JSONL line with the step, the seeded draw and the usage reported. "
        f"Shipped scenarios (in {SCENARIOS_DIR}): {shipped}.",
    )
    serve.add_argument("--scenario", default=DEFAULT_SCENARIO, metavar="NAME|FILE",
                       help=f"a shipped scenario's name ({shipped}) or a scenario YAML file (default {DEFAULT_SCENARIO}: "
                       "the one the stand-in endpoints of endpoints.yaml are for)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="TCP port (default 8765; 0 picks a free one)")
    serve.add_argument("--socket", type=Path, help="serve on this unix socket instead of TCP")
    serve.add_argument("--call-log", type=Path, help="append one JSONL line per model call to this file")
    serve.add_argument("--seed", type=int, default=0, help="run seed when a request names none (default 0)")
    serve.add_argument("--event-delay-ms", type=float, default=0.0,
                       help="pause between the events of a stream, to mimic a model generating (default 0)")
    serve.add_argument("--vary", action="store_true",
                       help="draw each request's variant anew (seeded by the run seed and its arrival number), so a "
                       "replayed request can get another answer; the call log says which (sbx replay's ground truth)")
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    import asyncio  # here, not at import: `sbx --help` must not load asyncio

    from orchestrator.cli import STOP_SIGNALS
    from orchestrator.failures import Interrupted
    from orchestrator.model import StandIn, load_scenario
    from orchestrator.paths import scenario_path

    standin = StandIn(load_scenario(scenario_path(args.scenario)), log_path=args.call_log, seed=args.seed,
                      event_delay_s=args.event_delay_ms / 1000, vary=args.vary)

    async def main() -> int:
        # the stop signals are taken by the loop itself (not sbx's handler, which raises wherever the main
        # thread happens to be, and inside the loop's callbacks that can be swallowed): the first one stops
        # serving, connections in flight are cut after a short grace
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        received: list[int] = []  # the stop signals taken; the first names the exit status

        def on_stop(signum: int) -> None:
            received.append(signum)
            stop.set()

        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, on_stop, int(sig))
        try:
            if args.socket:
                where = str(await standin.start_unix(args.socket))
            else:
                where = await standin.start_tcp(args.host, args.port)
            print(f"stand-in model {standin.scenario.name!r} serving on {where} (APIs under /v1)", flush=True)
            await stop.wait()
        finally:
            await standin.stop()
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
        return received[0]

    signum = asyncio.run(main())
    print("stopped", file=sys.stderr)
    raise Interrupted(signum)  # exits 128 + the signal's number, as every sbx command does
