"""The run's transcript of model calls: gzip JSONL, one object per call, bounded.

Each line (format version 1; the divergence reader codes against exactly these fields):

    {"v": 1, "index": 0-based order the gateway received the calls of this run in,
     "api": "anthropic" | "openai-chat" | "openai-responses", "method": "POST", "path": "/v1/messages?beta=true",
     "started_at": unix float, "ttfb_s": float | null, "total_s": float | null,
     "request": {"headers": {lower-case name: value, credentials "<redacted>"},
                 "body": UTF-8 text | "body_b64": base64 when not UTF-8},
     "response": {"status": int | null, "headers": {...}, "body": text | null (not streamed),
                  "events": [[event name | null, data text], ...] | null (SSE, in order)},
     "stream": bool, "usage": {"input", "cached_input", "cache_write", "output", "reasoning"} | null,
     "cost_usd": float | null,
     "outcome": "ok" | "provider_error" | "refused" | "client_error" | "upstream_timeout",
     "error": str | null, "speaker": str | null}

Lines are written when a call ends, so they may be out of `index` order; sort by `index` to read them in
order. Bounds: a body is recorded up to MAX_BODY_BYTES, the events of one stream up to MAX_EVENTS and
MAX_EVENTS_BYTES in all. What was cut is marked with `"truncated": <original size in bytes>` inside
`request` or `response` (and `"events_dropped": N` for events past the cap). A refused call keeps no body
(the gateway records its size as `truncated` and its sha256 in `error`). A run's file stops growing at
MAX_TRANSCRIPT_BYTES on disk: the first line that would cross it and every later one are dropped and counted
(`TranscriptWriter.dropped`; the gateway reports it as an event). Each line is flushed with a zlib sync flush,
so a crash loses at most the call being written.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import zlib
from pathlib import Path
from typing import Any

# The format's names are defined once, in orchestrator/specs/transcript.py, for this writer and every reader.
from orchestrator.specs.transcript import CREDENTIAL_HEADERS, REDACTED  # noqa: E402

MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_EVENTS = 50_000
MAX_EVENTS_BYTES = 8 * 1024 * 1024
MAX_HEADER_VALUE = 8 * 1024
#: a run's transcript on disk (compressed); the host's disk cost of one run, stored twice (run folder, artifacts)
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024


def headers_record(headers: Any) -> dict[str, str]:
    """Lower-case names; credentials replaced by "<redacted>"; repeated names joined with ", "; bounded."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = str(name).lower()[:256]
        value = REDACTED if key in CREDENTIAL_HEADERS else str(value)[:MAX_HEADER_VALUE]
        out[key] = f"{out[key]}, {value}" if key in out and value != REDACTED else value
        if len(out) >= 256:
            break
    return out


def body_record(raw: bytes, into: dict[str, Any]) -> None:
    """Put `raw` into `into` as "body" (UTF-8 text) or "body_b64", cut at MAX_BODY_BYTES and marked."""
    cut = raw[:MAX_BODY_BYTES]
    if len(raw) > MAX_BODY_BYTES:
        into["truncated"] = len(raw)
    try:
        into["body"] = cut.decode("utf-8")
        return
    except UnicodeDecodeError as exc:
        # a cut through a multi-byte character is still text: drop the partial character
        if len(raw) > MAX_BODY_BYTES and exc.start >= len(cut) - 3:
            try:
                into["body"] = cut[:exc.start].decode("utf-8")
                return
            except UnicodeDecodeError:
                pass
    into["body_b64"] = base64.b64encode(cut).decode()


class EventsRecord:
    """SSE events of one stream, kept in order up to the caps."""

    def __init__(self) -> None:
        self.events: list[list[str | None]] = []
        self.size = 0
        self.dropped = 0
        self.dropped_bytes = 0

    def add(self, name: str | None, data: str) -> None:
        n = len(data) + len(name or "")
        if len(self.events) >= MAX_EVENTS or self.size + n > MAX_EVENTS_BYTES:
            self.dropped += 1
            self.dropped_bytes += n
            return
        self.size += n
        self.events.append([name, data])


class TranscriptWriter:
    """Append-only gzip JSONL writer, at most `max_bytes` on disk; thread-safe (the gateway writes from a worker
    thread)."""

    def __init__(self, path: Path, max_bytes: int = MAX_TRANSCRIPT_BYTES) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.max_bytes = max_bytes
        self._raw = path.open("ab")
        # level 3: about half the CPU of the default 9 for a few percent more bytes (agent prompts repeat a lot)
        self._file = gzip.GzipFile(fileobj=self._raw, mode="ab", compresslevel=3)
        self._lock = threading.Lock()
        self.lines = 0
        #: lines not written because the file reached max_bytes (0 while under it)
        self.dropped = 0

    @property
    def full(self) -> bool:
        return self.dropped > 0

    def write(self, record: dict[str, Any], secret: str | None = None) -> bool:
        """Append one call; False when it was dropped at the byte cap. Any occurrence of `secret` (the real
        key, should an upstream echo it) is replaced by "<redacted>" before anything reaches the file."""
        if self.dropped:
            with self._lock:
                self.dropped += 1
            return False
        text = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        if secret:
            text = text.replace(secret, REDACTED)
        line = text.encode() + b"\n"
        with self._lock:
            # deflate never grows data by more than ~0.1% plus a few bytes per block: the line's own length
            # (and a margin) bounds what it adds on disk, so the file never passes max_bytes
            if self.dropped or self._raw.tell() + len(line) + len(line) // 512 + 64 > self.max_bytes:
                self.dropped += 1
                return False
            self._file.write(line)
            self._file.flush(zlib.Z_SYNC_FLUSH)
            self.lines += 1
        return True

    def close(self) -> None:
        with self._lock:
            self._file.close()
            self._raw.close()


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """Every call recorded in a transcript, in `index` order (also of a transcript still being written, or
    left by a crash: the complete lines before the unterminated end are read)."""
    records = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        try:
            for line in f:
                if line.endswith("\n"):
                    records.append(json.loads(line))
        except EOFError:
            pass
    return sorted(records, key=lambda r: r["index"])
