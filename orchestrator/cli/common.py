"""What every `sbx` command shares: where state lives (`--home`, `--ledger`), one JSON style, exit codes.

Exit codes: 0 ok; 1 the thing checked failed (a failed run, an unscorable artifact, a flagged audit);
2 usage or config error; 3 infrastructure (no engine, ledger busy). Errors carry their exit code in their
type (orchestrator/failures.py); `sbx` prints the message and exits with it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.home import Home

if TYPE_CHECKING:
    from orchestrator.ledger import Ledger

OK, CHECK_FAILED, USAGE, INFRA = 0, 1, 2, 3


def home(args: argparse.Namespace) -> Home:
    """The Home named by `--home`, else `$SBX_HOME`, else `./.sbx` (read once, here, at the edge)."""
    return Home.from_env(getattr(args, "home", None))


def add_ledger(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ledger", type=Path, default=None, help="ledger file (default: HOME/ledger.sqlite)")


def ledger_path(args: argparse.Namespace) -> Path:
    return args.ledger if getattr(args, "ledger", None) is not None else home(args).ledger_path


def open_ledger(args: argparse.Namespace, *, create: bool = False) -> Ledger:
    """The ledger a command reads (`--ledger`, else the Home's); missing is an error unless `create`."""
    from orchestrator.ledger import Ledger

    return Ledger(ledger_path(args), create=create)


def add_model_files(p: argparse.ArgumentParser) -> None:
    """--endpoints and --ratecards: where the model gateway reads endpoints (never keys) and rate cards."""
    p.add_argument("--endpoints", type=Path, default=Path("endpoints.yaml"), metavar="FILE",
                   help="model endpoints for runs that talk to a model (default: ./endpoints.yaml)")
    p.add_argument("--ratecards", type=Path, default=Path("ratecards"), metavar="DIR",
                   help="dated rate cards that price their calls (default: ./ratecards)")


def add_json(p: argparse.ArgumentParser, what: str = "the result") -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} as one JSON document")


def print_json(value: Any) -> None:
    """One JSON document on stdout, in the one style every command uses."""
    json.dump(value, sys.stdout, indent=2, sort_keys=False, default=str, allow_nan=False)
    sys.stdout.write("\n")
