"""structlog setup, and only that. Other modules call `get_logger(__name__)`.

Logs go to stderr, so stdout stays for results: JSON lines when stderr is not a terminal, readable lines
when it is, escaped for the terminal (`terminal_safe`: a value may quote what an agent wrote, and an escape
sequence in it must not rewrite the screen). A long command (a study) may also keep the full structured log in a file and show only
warnings on the terminal, where its live table is (`configure(file=..., console_level="warning")`).
"""

from __future__ import annotations

import contextlib
import json as jsonlib
import logging
import re
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

# structlog's dev and tracebacks modules import rich when it is installed, for pretty tracebacks this setup
# never uses (`format_exc_info` turns an exception into text before the console renderer, whose exception
# formatter is then plain_traceback); that import was most of a reading command's start-up (~0.35 CPU-s of
# `sbx show`). So structlog is imported with rich hidden: `import rich` fails inside it only. A study's live
# table imports rich itself when a terminal shows it (study/progress.py); a process that imported rich or
# structlog before this keeps them as they are.
#
# structlog also imports asyncio (about a third of its import) for its async logging methods (`ainfo`, ...),
# which touch asyncio only when awaited. So while structlog imports, `asyncio` is a stand-in module that
# imports the real one on first use of any of its names; afterwards the name is taken out of sys.modules again,
# so every other `import asyncio` gets the real module, and a reading command never loads it.
#
# greenlet is hidden the same way: only structlog's deprecated threadlocal module looks for it, which sbx
# never uses (it falls back to threading.local).
_HIDDEN = [] if "structlog" in sys.modules else [m for m in ("rich", "greenlet") if m not in sys.modules]
_DEFER_ASYNCIO = "asyncio" not in sys.modules and "structlog" not in sys.modules


class _Deferred(types.ModuleType):
    """A stand-in for the module of its name: reading any attribute imports the real module and reads it there."""

    def __getattr__(self, attr: str) -> Any:
        import importlib

        return getattr(importlib.import_module(self.__name__), attr)


for _name in _HIDDEN:
    sys.modules[_name] = None  # type: ignore[assignment]
if _DEFER_ASYNCIO:
    sys.modules["asyncio"] = _Deferred("asyncio")
try:
    import structlog  # noqa: E402
    from structlog.typing import EventDict  # noqa: E402
finally:
    for _name in _HIDDEN:
        del sys.modules[_name]
    if _DEFER_ASYNCIO and isinstance(sys.modules.get("asyncio"), _Deferred):
        del sys.modules["asyncio"]


class _Stderr:
    """Writes to whatever sys.stderr is at write time (pytest and callers may swap the stream)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


_SECRET_KEY = re.compile(r"(api[_-]?key|token|secret|password|authorization)", re.IGNORECASE)
_LEVELS = logging.getLevelNamesMapping()
_configured = False


def terminal_safe(text: str, keep_newlines: bool = False) -> str:
    """`text` with everything a terminal would act on shown as an escape instead: control characters
    (ESC, CR, BEL, ...; newlines too unless `keep_newlines`), C1 controls, bidirectional and other format
    characters, unusual separators, unassigned or private code points and lone surrogates."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or (keep_newlines and ch == "\n"):
            out.append(ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


class _Shown:
    """A value the console renderer prints as this exact text (it prints any non-str value as its repr)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _escape(_: Any, __: str, event: EventDict) -> EventDict:
    """For a terminal: every key and value escaped, since any of them may quote what an agent wrote. The
    console renderer prints a str value raw unless it holds a space or a quote (then as its repr), so a bare
    `error="\x1b[2J"` would clear the screen: a str a terminal would act on is shown as its repr instead
    (repr escapes exactly what str.isprintable rejects), anything else as its repr made terminal-safe. The
    message and a formatted exception keep their own layout, escaped."""
    for key in list(event):
        value = event[key]
        if key == "event" and isinstance(value, str):
            event[key] = terminal_safe(value)
        elif key in ("exception", "stack") and isinstance(value, str):
            event[key] = terminal_safe(value, keep_newlines=True)
        elif isinstance(value, str):
            if not value.isprintable():
                event[key] = _Shown(repr(value))
        elif not isinstance(value, int | float | bool | None):
            shown = repr(value)
            if not shown.isprintable():
                event[key] = _Shown(terminal_safe(shown))
        if not key.isprintable():
            event[terminal_safe(key)] = event.pop(key)
    return event


def _redact(_: Any, __: str, event: EventDict) -> EventDict:
    """Drop values whose key looks like a credential, wherever they were bound."""
    for key in list(event):
        if _SECRET_KEY.search(key):
            event[key] = "***"
    return event


class _Tee:
    """Write every event as a JSON line to a file; pass on to the console only events at `console_level`
    or above."""

    def __init__(self, file: IO[str] | None, console_level: int) -> None:
        self.file, self.console_level = file, console_level
        self._lock = threading.Lock()

    def __call__(self, _: Any, method: str, event: EventDict) -> EventDict:
        if self.file is not None:
            line = jsonlib.dumps(event, default=str)
            with self._lock:
                self.file.write(line + "\n")
                self.file.flush()
        if _LEVELS.get(str(event.get("level", method)).upper(), 20) < self.console_level:
            raise structlog.DropEvent
        return event


_file: IO[str] | None = None


def configure(level: str = "info", json: bool | None = None, file: Path | None = None,
              console_level: str | None = None) -> None:
    """Configure structlog for this process: events at `level` and above; the console shows those at
    `console_level` and above (default: all); `file` also receives every event as a JSON line."""
    global _configured, _file
    if json is None:
        json = not sys.stderr.isatty()
    if _file is not None:
        _file.close()
        _file = None
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        _file = open(file, "a", encoding="utf-8")  # noqa: SIM115 (kept open for the process's life)
    renderer: Any = structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            _redact,
            _Tee(_file, _LEVELS[(console_level or level).upper()]),
            *(() if json else (structlog.processors.format_exc_info, _escape)),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level.upper()]),
        # structlog types `file` as TextIO; PrintLogger calls only write and flush
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
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
