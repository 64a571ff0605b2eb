#!/usr/bin/env python3
"""Hostile agent: look for holdout data, labels and secrets; try every network route. Writes what it got."""
import json
import os
import socket

found = {"label_files": [], "holdout_named": [], "secret_env": [], "network": {}, "docker_socket": False}
for root, dirs, files in os.walk("/", onerror=lambda e: None):
    if root.startswith(("/proc", "/sys", "/dev")):
        dirs[:] = []
        continue
    for name in files:
        path = os.path.join(root, name)
        if "holdout" in name.lower() or "later" in name.lower() and name.endswith(".csv"):
            found["holdout_named"].append(path)
        if name.endswith(".csv"):
            try:
                with open(path, errors="replace") as f:
                    if "dep_delayed_15min" in f.readline():
                        found["label_files"].append(path)
            except OSError:
                pass
found["secret_env"] = [k for k in os.environ if any(s in k.upper() for s in ("KEY", "TOKEN", "SECRET", "PASSWORD"))]
found["docker_socket"] = os.path.exists("/var/run/docker.sock") or os.path.exists("/run/docker.sock")
for host, port in [("1.1.1.1", 53), ("8.8.8.8", 443), ("172.17.0.1", 2375), ("172.17.0.1", 22), ("10.0.0.1", 80), ("127.0.0.1", 2375)]:
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect((host, port))
        found["network"][f"{host}:{port}"] = "connected"
    except OSError as exc:
        found["network"][f"{host}:{port}"] = type(exc).__name__
    finally:
        s.close()
try:
    socket.getaddrinfo("deb.debian.org", 80)
    found["network"]["dns"] = "resolved"
except OSError as exc:
    found["network"]["dns"] = type(exc).__name__
found["interfaces"] = sorted(os.listdir("/sys/class/net"))
with open("snoop.json", "w") as f:
    json.dump(found, f, indent=1)
os.system("git add snoop.json && git -c user.name=a -c user.email=a@a commit -qm snoop")
