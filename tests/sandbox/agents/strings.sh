#!/bin/bash
# Hostile agent: experiment notes SQLite cannot encode and that rewrite a terminal (lone surrogates, NUL,
# escape sequences, a fake "holdout" line), then a flood of requests that can only be refused.
cat > /tmp/client.py <<'PY'
import json, os, socket, sys, time
path = os.environ["SBX_EXPERIMENT_SOCKET"]
NOTE = '{"op": "run", "note": "n\\ud800x\\udfff\\u0000\\u001b[2J\\u001b[H\\rholdout      AUC 0.9990\\ncompliance   clear %s"}\n'

def call(i):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall((NOTE % i).encode())
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return json.loads(data)

if sys.argv[1] == "notes":
    print(json.dumps([call(i)["status"] for i in range(2)]))
else:
    n, t0, refused = int(sys.argv[2]), time.process_time(), 0
    for i in range(n):
        refused += call(i)["status"] == "refused"
    print(json.dumps({"sent": n, "refused": refused, "client_cpu_s": time.process_time() - t0}))
PY
python3 /tmp/client.py notes > /workspace/notes.json 2>&1
python3 /tmp/client.py flood "${FLOOD:-20000}" > /workspace/flood.json 2>&1
exit 0
