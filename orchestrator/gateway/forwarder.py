"""Host side of the in-sandbox forwarder (images/sandbox/forwarder.py): where the run's gateway socket is
mounted, the command that starts the forwarder, and starting it in a running sandbox with `docker exec`.

The run lifecycle mounts the folder of the socket `Gateway.open_run` returned (it holds only that run's
socket) read-only at MODEL_SOCKET_DIR, starts the forwarder before the agent, and points the agent CLI at
http://127.0.0.1:PORT with a dummy key.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from orchestrator.failures import SandboxStartTimeout

FORWARDER_USER = "sbxfwd"
FORWARDER_UID = 990
FORWARDER_SCRIPT = "/opt/sbx/sandbox/forwarder.py"
#: the venv's interpreter exists on both bases; -I -S: no site hook (meter gate), no PYTHONPATH, no user site
PYTHON = ("/opt/sbx/venv/bin/python3", "-I", "-S")
MODEL_SOCKET_DIR = "/run/sbx-model"
DEFAULT_PORT = 4000


def socket_owner() -> int | None:
    """Whom a model socket belongs to: as root, the forwarder's user (mode 0600), so the agent cannot go
    around the forwarder; otherwise nobody in particular (mode 0666)."""
    return FORWARDER_UID if os.geteuid() == 0 else None


def socket_in_sandbox(host_socket: Path) -> str:
    return f"{MODEL_SOCKET_DIR}/{host_socket.name}"


def mount(host_socket: Path) -> dict[str, Any]:
    """A docker-py `Mount`-style dict: the run's socket folder, read-only."""
    return {"Target": MODEL_SOCKET_DIR, "Source": str(host_socket.parent), "Type": "bind", "ReadOnly": True}


def command(socket_path: str, port: int = DEFAULT_PORT, max_connections: int = 64,
            idle_timeout_s: float = 900) -> list[str]:
    return [*PYTHON, FORWARDER_SCRIPT, "--socket", socket_path, "--port", str(port),
            "--max-connections", str(max_connections), "--idle-timeout", f"{idle_timeout_s:g}"]


def base_url(port: int = DEFAULT_PORT) -> str:
    """What the agent CLI is pointed at (add /v1 where the CLI expects it)."""
    return f"http://127.0.0.1:{port}"


def start(container: Any, host_socket: Path, port: int = DEFAULT_PORT, timeout_s: float = 15,
          inside: str | None = None, **kwargs: Any) -> None:
    """Start the forwarder in `container` (a docker-py Container) as FORWARDER_USER and wait until it accepts.
    `inside` is the socket's path in the sandbox when it is not mounted at MODEL_SOCKET_DIR (a run's socket
    folder, mounted at /run/sbx)."""
    path = inside or socket_in_sandbox(host_socket)
    container.exec_run(command(path, port, **kwargs), user=FORWARDER_USER, detach=True)
    probe = [*PYTHON, "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 1).close()"]
    deadline = time.monotonic() + timeout_s
    while True:
        if container.exec_run(probe, user=FORWARDER_USER).exit_code == 0:
            return
        if time.monotonic() > deadline:
            raise SandboxStartTimeout(f"model forwarder did not listen on 127.0.0.1:{port} within {timeout_s:g} s")
        time.sleep(0.1)
