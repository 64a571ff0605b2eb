import importlib.util
import socket
import time

import numpy as np
import pytest

from orchestrator.paths import images_root
from orchestrator.scoring import protocol


def _runner():
    spec = importlib.util.spec_from_file_location("sbx_runner", images_root() / "scorer" / "runner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_runner_speaks_the_same_frames() -> None:
    r = _runner()
    assert r.PROTOCOL_VERSION == protocol.PROTOCOL_VERSION
    assert r.HEADER.format == protocol.HEADER.format
    for name in ("HELLO", "STARTED", "READY", "FAILED", "PREDS", "BATCH", "END"):
        assert getattr(r, name) == getattr(protocol, name), name
    arr = np.array([0.25, 0.5, 1.0])
    assert r.encode_preds(np.ascontiguousarray(arr, dtype="<f8")) == protocol.encode_preds(arr)


def test_frames_round_trip_and_limits() -> None:
    a, b = socket.socketpair()
    deadline = time.monotonic() + 5
    try:
        protocol.send_frame(a, protocol.PREDS, protocol.encode_preds(np.array([0.1, 0.9])), deadline=deadline)
        frame = protocol.recv_frame(b, deadline=deadline, preds_rows=2)
        shape, values = protocol.decode_preds(frame.payload)
        assert shape == (2,) and values.tolist() == [0.1, 0.9]
        # a predictions frame far larger than the batch is refused before it is read
        a.sendall(protocol.HEADER.pack(protocol.PREDS, 10_000_000))
        with pytest.raises(protocol.ProtocolViolation):
            protocol.recv_frame(b, deadline=deadline, preds_rows=2)
        a.sendall(protocol.HEADER.pack(b"Z", 0))
        with pytest.raises(protocol.ProtocolViolation):
            protocol.recv_frame(b, deadline=deadline)
        with pytest.raises(protocol.Deadline):
            protocol.recv_frame(b, deadline=time.monotonic() + 0.1)
        a.close()
        with pytest.raises(protocol.PeerClosed):
            protocol.recv_frame(b, deadline=deadline)
    finally:
        a.close()
        b.close()


def test_decode_refuses_inconsistent_payloads() -> None:
    good = protocol.encode_preds(np.zeros(3))
    with pytest.raises(protocol.ProtocolViolation):
        protocol.decode_preds(good[:-1])
    with pytest.raises(protocol.ProtocolViolation):
        protocol.decode_preds(b"")
    with pytest.raises(protocol.ProtocolViolation):
        protocol.decode_preds(bytes([9]) + b"\0" * 80)
    assert protocol.decode_preds(protocol.encode_preds(np.zeros((3, 2))))[0] == (3, 2)
