"""What text leaves the scorer, and how much (issue 11: "output that leaves the scorer is limited to
predictions and bounded, sanitised errors").

Before the first batch is sent, the container holds nothing secret (the delivered code, the pristine train
and eval files), so what the scored code printed or raised while training may be kept: sanitised (valid
UTF-8 without NUL, surrogates or control characters other than newline and tab) and capped. From the first
batch on, every answer may carry holdout feature values, so no text the container sends is kept at all: a
failure while predicting is described by the host in its own words, with at most the exception's builtin
class name and one place in the delivered code (a file the scorer was given, a line that exists in it, a
function defined there): a few bits, never free text.
"""

from __future__ import annotations

import builtins
import math
import re
from collections.abc import Iterable, Mapping

#: longest kept text of one failure (the ledger's `detail`)
DETAIL_MAX = 4000
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BUILTIN_EXCEPTIONS = frozenset(
    name for name in dir(builtins) if isinstance(getattr(builtins, name), type)
    and issubclass(getattr(builtins, name), BaseException)
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def clean(text: object, limit: int = DETAIL_MAX, *, keep: str = "tail") -> str:
    """`text` as storable, printable text: surrogates and undecodable bytes replaced, NUL and control
    characters (but newline and tab) dropped, at most `limit` characters (the tail, or the head)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        text = str(text)
    text = text.encode("utf-8", errors="replace").decode("utf-8", errors="replace")
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if len(text) <= limit:
        return text
    return ("[...]\n" + text[-(limit - 6):]) if keep == "tail" else (text[: limit - 6] + "\n[...]")


def exception_name(name: object) -> str | None:
    """A builtin exception class name as sent, else None (an agent-defined class name is free text)."""
    return name if isinstance(name, str) and name in _BUILTIN_EXCEPTIONS else None


def place_in_code(frames: object, sources: Mapping[str, bytes], root: str = "/workspace") -> str | None:
    """The innermost frame of `frames` ([filename, line, function] lists from the runner) that lies in the
    delivered code, as `file:line in function`, when the file is one the scorer was given, the line exists
    in it and the function is defined in it with `def`; else None."""
    if not isinstance(frames, list):
        return None
    for frame in reversed(frames[-8:]):
        if not (isinstance(frame, list | tuple) and len(frame) == 3):
            continue
        filename, line, function = frame
        if not (isinstance(filename, str) and isinstance(line, int) and isinstance(function, str)):
            continue
        rel = filename[len(root) + 1:] if filename.startswith(root + "/") else None
        if rel is None or rel not in sources:
            continue
        text = sources[rel].decode("utf-8", errors="replace")
        if not 1 <= line <= text.count("\n") + 1:
            continue
        if function != "<module>" and not (_IDENT.match(function) and re.search(rf"\bdef {re.escape(function)}\b", text)):
            continue
        return f"{rel}:{line} in {function}"
    return None


def reported_score(texts: Iterable[str], pattern: str, bounded: bool = True) -> float | None:
    """The eval score train.py printed (the task's `eval_line`), if it is a number in [0, 1] (`bounded`, a
    metric such as AUC) or any finite number (an RMSE); else None: a value out of range or one that does
    not parse is never taken as a score."""
    for text in texts:
        m = re.search(pattern, text)
        if m is None:
            continue
        try:
            value = float(m.group(1))
        except (ValueError, IndexError):
            return None
        if not bounded:
            return value if math.isfinite(value) else None
        return value if 0.0 <= value <= 1.0 else None
    return None
