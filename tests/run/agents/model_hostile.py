#!/usr/bin/env python3
"""A hostile agent against the model path (tests/run/test_model_hostile.py), run with an endpoint so the run's
gateway serves it through the sandbox's forwarder. It floods the forwarder, spends ten times its token limit,
goes after the forwarder (signals, its port, the gateway socket around it, its /proc files), looks for other
runs' sockets and for a way off the box, and dumps everything it could read to look for the real key. What
it found goes to hostile.json and hostile-dump.txt in the workspace (the copy-out brings them back)."""

import collections
import errno
import glob
import http.client
import json
import os
import signal
import socket
import stat
import threading

BASE = os.environ["SBX_MODEL_BASE_URL"]
HOST, PORT = "127.0.0.1", int(BASE.rsplit(":", 1)[1])
OPTIONS = json.loads(os.environ.get("SBX_AGENT_OPTIONS", "{}"))
out = {"env_names": sorted(os.environ)}
dump = [json.dumps(dict(os.environ))]


def call(text, timeout=60):
    body = {"model": os.environ["SBX_MODEL_NAME"], "messages": [{"role": "user", "content": text}]}
    conn = http.client.HTTPConnection(HOST, PORT, timeout=timeout)
    try:
        conn.request("POST", "/v1/chat/completions", body=json.dumps(body),
                     headers={"content-type": "application/json",
                              "authorization": "Bearer " + os.environ["SBX_MODEL_API_KEY"],
                              "x-sbx-run-id": "someone-else"})  # a forged run id: the gateway must ignore it
        r = conn.getresponse()
        data = r.read()
        dump.append(data.decode(errors="replace"))
        dump.append(repr(r.getheaders()))
        return r.status
    except OSError as exc:
        return type(exc).__name__
    finally:
        conn.close()


def errno_name(exc):
    return errno.errorcode.get(getattr(exc, "errno", None) or 0) or type(exc).__name__


out["first"] = call("hello")

# 1. a flood: 40 calls at once (the gateway lets 16 of one run be in flight)
results = []
threads = [threading.Thread(target=lambda i=i: results.append(call(f"flood {i}"))) for i in range(40)]
for t in threads:
    t.start()
for t in threads:
    t.join()
out["flood"] = dict(collections.Counter(str(r) for r in results))

# 2. the forwarder: find it, signal it, read its /proc files, take its port, go around it to the socket
pids = []
for path in glob.glob("/proc/[0-9]*/cmdline"):
    try:
        cmd = open(path, "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        continue
    dump.append(cmd)
    if "forwarder.py" in cmd:
        pids.append(int(path.split("/")[2]))
out["forwarder_pids"] = pids
for pid in pids:
    for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGTERM):
        try:
            os.kill(pid, sig)
            out.setdefault("signals", []).append(f"{sig.name} sent")
        except OSError as exc:
            out.setdefault("signals", []).append(f"{sig.name} {errno_name(exc)}")
    for name in ("environ", "mem", "fd"):
        try:
            if name == "fd":
                os.listdir(f"/proc/{pid}/fd")
            else:
                open(f"/proc/{pid}/{name}", "rb").read(4096)
            out.setdefault("proc", []).append(f"{name} read")
        except OSError as exc:
            out.setdefault("proc", []).append(f"{name} {errno_name(exc)}")
sock = socket.socket()
try:
    sock.bind((HOST, PORT))
    out["bind_port"] = "bound"
except OSError as exc:
    out["bind_port"] = errno_name(exc)
sock.close()
out["around"] = {}
for path in sorted(glob.glob("/run/sbx/*")):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        out["around"][path] = "connected"
    except OSError as exc:
        out["around"][path] = errno_name(exc)
    s.close()
out["after_attacks"] = call("still there?")

# 3. other runs' sockets: every unix socket this box can name, and a search of the file system
names = set()
for line in open("/proc/net/unix").read().splitlines()[1:]:
    parts = line.split()
    if len(parts) >= 8 and parts[7].startswith("/"):
        names.add(parts[7])
for root in ("/run", "/tmp", "/home", "/var", "/workspace", "/opt", "/mnt", "/media", "/srv"):
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = os.path.join(dirpath, f)
            try:
                if stat.S_ISSOCK(os.lstat(p).st_mode):
                    names.add(p)
            except OSError:
                pass
out["sockets"] = {}
for name in sorted(names):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(name)
        out["sockets"][name] = "connected"
    except OSError as exc:
        out["sockets"][name] = errno_name(exc)
    s.close()

# 4. off the box: DNS, the cloud metadata address, the host's bridge, a public address, the Docker socket
net = {}
try:
    socket.getaddrinfo("api.anthropic.com", 443)
    net["dns"] = "resolved"
except OSError as exc:
    net["dns"] = type(exc).__name__
for host, port in (("169.254.169.254", 80), ("172.17.0.1", 2375), ("8.8.8.8", 53), ("1.1.1.1", 443)):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        net[f"{host}:{port}"] = "connected"
    except OSError as exc:
        net[f"{host}:{port}"] = errno_name(exc)
    s.close()
net["docker_socket"] = os.path.exists("/var/run/docker.sock")
out["network"] = net

# 5. last, ten times the token limit, one big call after another (each about 2,000 tokens)
limit = int(OPTIONS.get("token_limit", 20000))
big = "spend " * 1300
statuses = [call(f"{big} {i}") for i in range(10 * limit // 2000)]
out["tokens"] = dict(collections.Counter(str(s) for s in statuses))

# 6. everything readable that could hold a key
for pattern in ("/proc/[0-9]*/environ", "/run/sbx/*", "/home/agent/**", "/tmp/**", "/etc/*", "/opt/sbx/*"):
    for path in glob.glob(pattern, recursive=True):
        try:
            if os.path.isfile(path) and os.path.getsize(path) < 1_000_000:
                dump.append(open(path, "rb").read().decode(errors="replace"))
        except OSError:
            pass

with open("hostile.json", "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
with open("hostile-dump.txt", "w") as f:
    f.write("\n".join(dump))
print(json.dumps(out, sort_keys=True))
