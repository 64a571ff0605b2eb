"""The `sbx` command line: parse, call, print. Each command group lives in its own module here and
exposes `register(subparsers)`; the command's handler returns the process exit code."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from orchestrator import __version__, log
from orchestrator.failures import SbxError

#: command-group modules, imported lazily so `sbx --help` does not load docker, ray or xgboost
_GROUPS = (
    "orchestrator.cli.data",
    "orchestrator.cli.images",
    "orchestrator.cli.score",
    "orchestrator.cli.smoke",
    "orchestrator.cli.report",
    "orchestrator.cli.show",
    "orchestrator.cli.run",
    "orchestrator.cli.audit",
    "orchestrator.cli.study",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sbx", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"sbx {__version__}")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument("--log-json", action="store_true", help="JSON log lines on stderr even on a terminal")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _GROUPS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    log.configure(level=args.log_level, json=True if args.log_json else None)
    try:
        return int(args.handler(args) or 0)
    except SbxError as exc:
        print(f"sbx: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sbx: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
