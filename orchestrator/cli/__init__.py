"""The `sbx` command line: parse, call, print. Each command group lives in its own module here and
exposes `register(subparsers)`; the command's handler returns the process exit code."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from orchestrator import __version__
from orchestrator.cli.common import INFRA
from orchestrator.failures import Interrupted, SbxError

#: the signals that stop any sbx command the way Ctrl-C does (what `timeout`, systemd, Kubernetes, Ray and a
#: closed terminal send)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stop(signum: int, _frame: FrameType | None) -> None:
    """The first stop signal raises Interrupted where the main thread is; later ones are noted and ignored,
    so the clean-up that follows (containers removed, the ledger told) is not cut short. Every container
    also ends by itself at its deadline, so even SIGKILL leaves nothing running past it."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _again)
    raise Interrupted(signum)


def _again(signum: int, _frame: FrameType | None) -> None:
    print(f"sbx: {signal.Signals(signum).name} again; still cleaning up (SIGKILL stops sbx at once; its "
          "containers end at their deadlines)", file=sys.stderr)


def install_signal_handlers() -> dict[int, object]:
    """Install `_stop` for every stop signal (main thread only); returns the handlers it replaced."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, _stop) for sig in STOP_SIGNALS}


def restore_signal_handlers(saved: dict[int, object]) -> None:
    for sig, handler in saved.items():
        signal.signal(sig, handler)  # type: ignore[arg-type]  # what getsignal gave

#: command-group modules, imported lazily so `sbx --help` does not load docker, ray or xgboost
_GROUPS = (
    "orchestrator.cli.data",
    "orchestrator.cli.images",
    "orchestrator.cli.score",
    "orchestrator.cli.smoke",
    "orchestrator.cli.report",
    "orchestrator.cli.diverge",
    "orchestrator.cli.show",
    "orchestrator.cli.transcript",
    "orchestrator.cli.replay",
    "orchestrator.cli.run",
    "orchestrator.cli.audit",
    "orchestrator.cli.study",
    "orchestrator.cli.model",
    "orchestrator.cli.endpoints",
    "orchestrator.cli.tasks",
    "orchestrator.cli.view",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sbx", description="Run coding and ML agents in fresh, metered Docker sandboxes, many times over, "
        "and report what the runs show. Exit codes: 0 ok, 1 the thing checked failed, 2 usage or config "
        "error, 3 infrastructure.")
    parser.add_argument("--version", action="version", version=f"sbx {__version__}")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    parser.add_argument("--log-json", action="store_true", help="JSON log lines on stderr even on a terminal")
    parser.add_argument("--home", default=None, metavar="DIR",
                        help="where sbx keeps its state (default: $SBX_HOME, else ./.sbx)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _GROUPS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from orchestrator import log  # structlog loads only for a command that runs, not for --help

    log.configure(level=args.log_level, json=True if args.log_json else None)
    saved = install_signal_handlers()
    try:
        return int(args.handler(args) or 0)
    except SbxError as exc:
        print(f"sbx: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else int(signal.SIGINT)
        print(f"sbx: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
        hint = getattr(args, "interrupted_hint", None)  # what a command's user does next (a study: resume it)
        if hint:
            print(f"sbx: {hint}", file=sys.stderr)
        return 128 + signum
    except OSError as exc:  # the host refused a file or folder sbx needs
        print(f"sbx: error: {exc}", file=sys.stderr)
        return INFRA
    finally:
        restore_signal_handlers(saved)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
