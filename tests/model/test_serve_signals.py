"""`sbx model serve` stops on SIGTERM, SIGINT and SIGHUP like every sbx command (issue 20, item 7): with a
stream in flight and an idle keep-alive connection open, it stops serving, frees its port and exits 128 + the
signal's number."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys

import pytest

from orchestrator.paths import REPO_ROOT
from tests.model.conftest import reap

SCENARIO = REPO_ROOT / "orchestrator" / "model" / "scenarios" / "flight-delays.yaml"


def _post(port: int, body: dict) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    raw = json.dumps(body).encode()
    s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
              b"content-length: %d\r\n\r\n" % len(raw) + raw)
    return s


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_serve_stops_on_every_stop_signal(sig: signal.Signals) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "model", "serve", "--scenario", str(SCENARIO),
                             "--port", "0", "--event-delay-ms", "2000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    conns: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.rsplit(":", 1)[1].split()[0])
        body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "x"}]}
        idle = _post(port, body)              # answered, then left open (keep-alive)
        assert idle.recv(65536).startswith(b"HTTP/1.1 200")
        streaming = _post(port, body | {"stream": True})   # a stream with 2 s between events: in flight
        assert streaming.recv(65536).startswith(b"HTTP/1.1 200")
        conns += [idle, streaming]
        proc.send_signal(sig)
        # a generous bound for a loaded machine: without the fix a stop could take minutes or never come
        assert proc.wait(30) == 128 + sig
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5)
        assert "stopped" in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        for c in conns:
            c.close()
        reap(proc)
