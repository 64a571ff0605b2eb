"""The forwarder in a real sandbox container: uid 1000 reaches the stand-in through forwarder -> socket ->
gateway, cannot kill the forwarder, and reaches nothing else (network none)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.gateway import ModelLimits, forwarder, read_transcript
from orchestrator.gateway.server import SOCKET_NAME
from orchestrator.gateway.thread import GatewayThread
from orchestrator.model import read_log
from tests.gateway.conftest import KEY

pytestmark = pytest.mark.docker

CLIENT = r"""
import json, sys, urllib.request
body = json.dumps({"model": "m", "stream": True, "stream_options": {"include_usage": True},
                   "messages": [{"role": "user", "content": "go"}],
                   "tools": [{"type": "function", "function": {"name": "bash", "parameters": {
                       "type": "object", "properties": {"command": {"type": "string"}}}}}]}).encode()
req = urllib.request.Request("http://127.0.0.1:%s/v1/chat/completions" % sys.argv[1], data=body,
                             headers={"content-type": "application/json", "authorization": "Bearer dummy"})
print(urllib.request.urlopen(req, timeout=30).read().decode())
"""

FIND_FORWARDER = r"""
import os
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        status = open(f"/proc/{pid}/status").read()
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        continue
    uid = [l.split()[1] for l in status.splitlines() if l.startswith("Uid:")][0]
    if uid == "990" and b"forwarder.py" in cmd:
        print(pid)
"""

ESCAPES = r"""
import socket, sys
out = {}
try:
    socket.getaddrinfo("example.com", 80)
    out["dns"] = "resolved"
except OSError as e:
    out["dns"] = type(e).__name__
for host in sys.argv[1:]:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, 80))
        out[host] = "connected"
    except OSError as e:
        out[host] = e.errno
    finally:
        s.close()
for path in ("/var/run/docker.sock", "/run/docker.sock"):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        out[path] = "connected"
    except OSError as e:
        out[path] = e.errno
    finally:
        s.close()
import json; print(json.dumps(out))
"""


@pytest.fixture
def sandbox(docker_client, built_images, gateway: GatewayThread, tmp_path: Path) -> Iterator[tuple]:
    gateway.gateway.socket_owner = forwarder.FORWARDER_UID  # only the forwarder may connect (tests run as root)
    sock = gateway.open_run("fwd-run", "openai-chat", "m", ModelLimits(), tmp_path / "t.jsonl.gz", seed=4)
    other = gateway.open_run("other-run", "openai-chat", "m", ModelLimits(), tmp_path / "o.jsonl.gz")
    image = built_images["sandbox"].tag
    container = docker_client.containers.run(
        image, ["sleep", "infinity"], detach=True, network_mode="none", user="agent", cap_drop=["ALL"],
        security_opt=["no-new-privileges"], pids_limit=128, init=True, mounts=[forwarder.mount(sock)],
        labels={"sbx.test": "gateway-forwarder"}, name=f"sbx-test-fwd-{uuid.uuid4().hex[:8]}")
    try:
        forwarder.start(container, sock, port=4000)
        yield container, sock, other
    finally:
        container.remove(force=True)


def _run(container, cmd: list[str], user: str = "agent") -> tuple[int, str]:
    result = container.exec_run(cmd, user=user)
    return result.exit_code, result.output.decode()


def test_agent_reaches_the_model_only_through_the_forwarder(sandbox, gateway: GatewayThread, tmp_path: Path,
                                                            docker_client) -> None:
    container, sock, other = sandbox
    code, out = _run(container, ["python3", "-c", CLIENT, "4000"])
    assert code == 0, out
    assert out.rstrip().endswith("data: [DONE]")
    chunks = [json.loads(line[6:]) for line in out.splitlines() if line.startswith("data: {")]
    calls = [tc for c in chunks for ch in c["choices"] for tc in ch["delta"].get("tool_calls", [])]
    assert calls[0]["function"]["name"] == "bash"
    assert json.loads("".join(tc["function"]["arguments"] for tc in calls)) == {"command": "./run_experiment"}
    # the agent cannot go around the forwarder: the socket is the forwarder user's alone
    code, out = _run(container, ["python3", "-c", "import socket; s = socket.socket(socket.AF_UNIX); "
                                 f"s.connect('{forwarder.MODEL_SOCKET_DIR}/{SOCKET_NAME}')"])
    assert code != 0 and "PermissionError" in out
    # only this run's socket is in the sandbox
    code, ls = _run(container, ["ls", "-A", forwarder.MODEL_SOCKET_DIR])
    assert ls.split() == [SOCKET_NAME]
    # the gateway knew the run from the socket: transcript of fwd-run, stand-in told run id and seed
    gateway.close_run("fwd-run")
    (call,) = read_transcript(tmp_path / "t.jsonl.gz")
    (rec,) = read_log(tmp_path / "standin.jsonl")
    assert (rec["run_id"], rec["seed"]) == ("fwd-run", 4) and call["usage"] == rec["usage"]
    env = container.attrs["Config"]["Env"] or []
    assert not any(KEY in e for e in env)
    assert KEY not in out


def test_agent_cannot_kill_the_forwarder(sandbox) -> None:
    container, _, _ = sandbox
    code, pids = _run(container, ["python3", "-c", FIND_FORWARDER])
    assert code == 0 and pids.split(), pids
    for pid in pids.split():
        for sig in ("SIGKILL", "SIGTERM", "SIGSTOP"):
            code, out = _run(container, ["python3", "-c", f"import os, signal; os.kill({pid}, signal.{sig})"])
            assert code != 0 and "PermissionError" in out, out
        code, out = _run(container, ["bash", "-c", f"kill -9 {pid}"])  # the shell builtin too
        assert code != 0 and "not permitted" in out
    code, out = _run(container, ["python3", "-c", CLIENT, "4000"])
    assert code == 0 and "[DONE]" in out  # still serving


def test_nothing_else_is_reachable(sandbox, docker_client) -> None:
    container, _, _ = sandbox
    import ipaddress

    ipam = docker_client.networks.get("bridge").attrs["IPAM"]["Config"][0]
    bridge = ipam.get("Gateway") or str(next(ipaddress.ip_network(ipam["Subnet"]).hosts()))
    code, out = _run(container, ["python3", "-c", ESCAPES, bridge, "169.254.169.254", "1.1.1.1"])
    assert code == 0, out
    result = json.loads(out)
    assert result["dns"] == "gaierror"
    for host in (bridge, "169.254.169.254", "1.1.1.1"):
        assert result[host] == 101  # ENETUNREACH: the sandbox has no route at all
    assert result["/var/run/docker.sock"] == 2 and result["/run/docker.sock"] == 2  # ENOENT
    # the forwarder's port is not another way out: a second listener on it is refused
    code, out = _run(container, ["python3", "-c",
                                 "import socket; s=socket.socket(); s.bind(('127.0.0.1', 4000))"])
    assert code != 0 and "Address already in use" in out


def test_connection_bound(docker_client, built_images, gateway: GatewayThread, tmp_path: Path) -> None:
    sock = gateway.open_run("bound-run", "openai-chat", "m", ModelLimits(), tmp_path / "b.jsonl.gz")
    container = docker_client.containers.run(
        built_images["sandbox"].tag, ["sleep", "infinity"], detach=True, network_mode="none", user="agent",
        cap_drop=["ALL"], security_opt=["no-new-privileges"], mounts=[forwarder.mount(sock)],
        labels={"sbx.test": "gateway-forwarder"}, name=f"sbx-test-fwd-{uuid.uuid4().hex[:8]}")
    try:
        forwarder.start(container, sock, port=4001, max_connections=3, idle_timeout_s=2)
        script = r"""
import socket, time
held = [socket.create_connection(("127.0.0.1", 4001)) for _ in range(3)]
time.sleep(0.3)
extra = socket.create_connection(("127.0.0.1", 4001)); extra.settimeout(2)
print("extra", extra.recv(10) == b"")            # closed at once: over the bound
time.sleep(3)
held[0].settimeout(2)
print("idle", held[0].recv(10) == b"")           # closed after the idle timeout
fresh = socket.create_connection(("127.0.0.1", 4001)); fresh.settimeout(2)
fresh.sendall(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
print("fresh", fresh.recv(12))
"""
        code, out = _run(container, ["python3", "-c", script])
        assert code == 0, out
        assert "extra True" in out and "idle True" in out and "fresh b'HTTP/1.1 405'" in out
    finally:
        container.remove(force=True)
