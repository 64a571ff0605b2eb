import ast
import socket
import time

import numpy as np
import pytest

from orchestrator import paths
from orchestrator.scoring import protocol

RUNNER = paths.INCONTAINER_DIR / "scorer_runner.py"


def test_runner_speaks_the_same_frames() -> None:
    """The runner repeats the protocol's constants as literals (it cannot import anything of ours)."""
    tree = ast.parse(RUNNER.read_text())
    frames = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, bytes)
              and len(n.value) == 1 and n.value != b"\n"}
    assert frames == {protocol.HELLO, protocol.STARTED, protocol.READY, protocol.FAILED, protocol.PREDS,
                      protocol.CONFIG, protocol.REPO, protocol.BATCH, protocol.END}
    versions = [v.value for d in ast.walk(tree) if isinstance(d, ast.Dict)
                for k, v in zip(d.keys, d.values, strict=True)
                if isinstance(k, ast.Constant) and k.value == "version" and isinstance(v, ast.Constant)]
    assert versions == [protocol.PROTOCOL_VERSION]
    structs = [c.args[0].value for c in ast.walk(tree) if isinstance(c, ast.Call)
               and getattr(c.func, "attr", "") == "Struct"]
    assert structs == [protocol.HEADER.format]
    assert "PREDS" in protocol.__doc__ or protocol.encode_preds  # the encoding is the same expression


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
