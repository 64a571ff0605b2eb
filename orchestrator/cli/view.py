"""`sbx view`: a local, read-only web viewer of the ledger, on 127.0.0.1 only (orchestrator/view)."""

from __future__ import annotations

import argparse

from orchestrator.cli.common import OK, add_ledger, home, ledger_path

#: the viewer's port unless --port says otherwise (the stand-in model's default is 8765)
DEFAULT_PORT = 8700


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "view", help="browse the ledger in a local web page: studies, runs, scores, audits, transcripts",
        description="Serve a read-only viewer of the ledger on 127.0.0.1 (no account; nothing is sent "
        "anywhere): every study with its pairings' results and live state, every run, paged and filtered, "
        "and one run's record, scores, grading, audit evidence, meter, events, cost and transcript on one "
        "page. A run's page is /run/ID (the short id `sbx study run` and `sbx study status` print will do).",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)")
    # `sbx view --home DIR` as well as `sbx --home DIR view`; SUPPRESS keeps the global one when not given
    p.add_argument("--home", default=argparse.SUPPRESS, metavar="DIR",
                   help="where sbx keeps its state (as `sbx --home`)")
    add_ledger(p)
    p.set_defaults(handler=_view)


def _view(args: argparse.Namespace) -> int:
    from orchestrator.view import ViewServer

    server = ViewServer(home(args), ledger_path(args), args.port)
    print(f"sbx view: {server.url}  (read-only; Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # Ctrl-C, or a stop signal (orchestrator/cli/__init__.py): the viewer just stops
        pass
    finally:
        server.server_close()
    return OK
