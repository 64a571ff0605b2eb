"""An incremental Server-Sent Events parser: bytes in (split anywhere), `(event name | None, data)` out.

Follows the WHATWG rules the SDKs use: lines end in LF, CRLF or CR; `data:` lines of one event are joined
with LF; a leading space after the colon is dropped; comment lines (starting with `:`) and `id:`/`retry:`
are ignored; an event is dispatched at a blank line, and only when it has data.
"""

from __future__ import annotations

Event = tuple[str | None, str]


class SSEParser:
    def __init__(self, max_event_bytes: int = 16 * 1024 * 1024) -> None:
        self._buf = b""
        self._name: str | None = None
        self._data: list[str] = []
        self._size = 0
        self._max = max_event_bytes
        self.oversized = 0  # events dropped for being larger than max_event_bytes

    def feed(self, chunk: bytes) -> list[Event]:
        self._buf += chunk
        events: list[Event] = []
        while True:
            cut = _line_end(self._buf)
            if cut is None:
                if len(self._buf) > self._max:  # one endless line: drop it rather than grow without bound
                    self._buf = b""
                    self._reset()
                    self.oversized += 1
                return events
            end, nxt = cut
            line = self._buf[:end].decode("utf-8", errors="replace")
            self._buf = self._buf[nxt:]
            if line == "":
                if self._data:
                    events.append((self._name, "\n".join(self._data)))
                self._reset()
                continue
            self._field(line)

    def close(self) -> list[Event]:
        """Flush at end of stream: a final event without its blank line still counts (as the SDKs do)."""
        events = self.feed(b"\n\n") if (self._buf or self._data) else []
        return events

    def _field(self, line: str) -> None:
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._name = value
        elif name == "data":
            self._size += len(value)
            if self._size > self._max:
                self.oversized += 1
                self._data = []
                return
            self._data.append(value)

    def _reset(self) -> None:
        self._name, self._data, self._size = None, [], 0


def _line_end(buf: bytes) -> tuple[int, int] | None:
    """(end of the first line, start of the next) or None if no complete line yet. A CR at the very end of the
    buffer waits for the next byte, which may be the LF of a CRLF."""
    lf = buf.find(b"\n")
    cr = buf.find(b"\r")
    if cr == -1 or (lf != -1 and lf < cr):
        return None if lf == -1 else (lf, lf + 1)
    if cr == len(buf) - 1:
        return None
    return (cr, cr + 2) if buf[cr + 1:cr + 2] == b"\n" else (cr, cr + 1)
