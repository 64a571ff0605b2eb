"""structlog setup, and only that. Other modules call `get_logger(__name__)`."""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import time
from collections.abc import Iterator
from typing import Any

import structlog

_SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|authorization)", re.IGNORECASE)
_configured = False


def _redact(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    """Drop values whose key looks like a credential, wherever they were bound."""
    for key in list(event):
        if _SECRET_KEY.search(key):
            event[key] = "***"
    return event


def configure(level: str = "info", json: bool | None = None) -> None:
    """Configure structlog once per process. Logs go to stderr so stdout stays for results."""
    global _configured
    if json is None:
        json = not sys.stderr.isatty()
    renderer: Any = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        # sys.stderr is looked up at each call, not once here: a stream swapped since (pytest's capture,
        # a redirect) may be closed by now, and writing to it would fail
        logger_factory=lambda *_: structlog.PrintLogger(sys.stderr),
        cache_logger_on_first_use=False,
    )
    _configured = True


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    if not _configured:
        configure()
    return structlog.get_logger(name)


@contextlib.contextmanager
def timed(log: Any, event: str, **fields: Any) -> Iterator[dict[str, Any]]:
    """Log `event` once with its outcome (ok/timeout/error) and duration; yields a dict for extra fields."""
    extra: dict[str, Any] = {}
    start = time.monotonic()
    outcome = "ok"
    try:
        yield extra
    except TimeoutError:
        outcome = "timeout"
        raise
    except BaseException:
        outcome = "error"
        raise
    finally:
        log.info(event, outcome=outcome, seconds=round(time.monotonic() - start, 3), **fields, **extra)
