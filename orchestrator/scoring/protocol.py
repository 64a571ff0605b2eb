"""The frames spoken between the host and the in-container runner (`orchestrator/incontainer/scorer_runner.py`).

A frame is one type byte, a 4-byte big-endian payload length, then the payload. The runner is trusted code
that runs untrusted code in the same process, so everything it sends is parsed here as hostile: lengths are
capped per frame type, JSON must be an object, predictions must be exactly the announced shape.

scorer_runner.py is never imported: the container runs it as its train.py. It
repeats the constants and a test keeps the two in step.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

PROTOCOL_VERSION = 3
HEADER = struct.Struct(">cI")

# runner -> host
HELLO = b"H"      # JSON {"version": 3, "pid": int}: connected, before any agent code
STARTED = b"S"    # empty: setup done, train.py starts now
READY = b"R"      # empty: train.py finished and left the contract's callable (predict_proba, predict, ...)
FAILED = b"F"     # JSON {"kind": "train"|"predict"|"no_predict"|"shape"|"dtype", "error": str, "tail": str, ...}
PREDS = b"P"      # ndim (1 byte), ndim dims (uint64 little-endian), float64 little-endian values
# host -> runner
CONFIG = b"C"     # JSON {"predict": name, "columns": int}: the contract's function, numbers per row (first)
REPO = b"T"       # a tar of the clean copy of the delivered code and the pristine data (made by the host)
BATCH = b"B"      # CSV text (header + rows, as in the features file), UTF-8
END = b"E"        # empty: no more batches; the runner exits

#: the largest payload the host accepts of each runner frame type (PREDS is bounded by the batch size)
_JSON_MAX = 64 * 1024
_ALLOWED = {HELLO: _JSON_MAX, STARTED: 0, READY: 0, FAILED: _JSON_MAX}


class ProtocolViolation(Exception):
    """The runner's process sent something the protocol does not allow (agent code can write to the socket)."""


class PeerClosed(Exception):
    """The runner's end of the socket closed: its process exited or was killed."""


class Deadline(TimeoutError):
    """The runner did not answer in time."""


@dataclass(frozen=True)
class Frame:
    kind: bytes
    payload: bytes

    def json(self) -> dict[str, Any]:
        try:
            obj = json.loads(self.payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ProtocolViolation(f"frame {self.kind!r}: payload is not JSON") from None
        if not isinstance(obj, dict):
            raise ProtocolViolation(f"frame {self.kind!r}: payload is not a JSON object")
        return obj


def send_frame(sock: socket.socket, kind: bytes, payload: bytes = b"", *, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise Deadline("no time left to send")
    sock.settimeout(remaining)
    try:
        sock.sendall(HEADER.pack(kind, len(payload)) + payload)
    except TimeoutError:
        raise Deadline("the runner stopped reading") from None
    except OSError as exc:
        raise PeerClosed(str(exc)) from None


def _recv_exact(sock: socket.socket, n: int, deadline: float) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Deadline("the runner did not answer in time")
        sock.settimeout(remaining)
        try:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
        except TimeoutError:
            raise Deadline("the runner did not answer in time") from None
        except OSError as exc:
            raise PeerClosed(str(exc)) from None
        if not chunk:
            raise PeerClosed("the runner closed the connection")
        buf += chunk
    return bytes(buf)


def recv_frame(sock: socket.socket, *, deadline: float, preds_rows: int = 0, preds_columns: int = 1) -> Frame:
    """One frame from the runner. `preds_rows` > 0 allows a PREDS frame for a batch of that many rows of
    `preds_columns` numbers each."""
    kind, length = HEADER.unpack(_recv_exact(sock, HEADER.size, deadline))
    limit = _ALLOWED.get(kind)
    if kind == PREDS and preds_rows > 0:
        limit = 1 + 8 * 8 + 8 * preds_rows * max(1, preds_columns) * 4  # a few dims; values beyond 4x the rows cannot be the answer
    if limit is None:
        raise ProtocolViolation(f"unexpected frame type {kind!r}")
    if length > limit:
        raise ProtocolViolation(f"frame {kind!r} of {length} bytes exceeds its limit of {limit}")
    return Frame(kind, _recv_exact(sock, length, deadline) if length else b"")


def decode_preds(payload: bytes) -> tuple[tuple[int, ...], np.ndarray]:
    """The shape the runner saw and the values it sent. Raises ProtocolViolation if the bytes disagree."""
    if not payload:
        raise ProtocolViolation("empty predictions frame")
    ndim = payload[0]
    if ndim > 8:
        raise ProtocolViolation(f"predictions with {ndim} dimensions")
    head = 1 + 8 * ndim
    if len(payload) < head:
        raise ProtocolViolation("truncated predictions header")
    shape = struct.unpack(f"<{ndim}Q", payload[1:head])
    count = int(np.prod(shape, dtype=np.uint64)) if ndim else 1
    if len(payload) - head != 8 * count:
        raise ProtocolViolation(f"predictions of shape {shape} carry {len(payload) - head} bytes, not {8 * count}")
    return tuple(int(d) for d in shape), np.frombuffer(payload, dtype="<f8", offset=head).copy()


def encode_preds(values: np.ndarray) -> bytes:
    """The runner's encoding (repeated in runner.py), for tests and the host-side benchmark."""
    arr = np.ascontiguousarray(values, dtype="<f8")
    return bytes([arr.ndim]) + struct.pack(f"<{arr.ndim}Q", *arr.shape) + arr.tobytes()
