#!/usr/bin/env python3
"""A scripted agent with a model endpoint: makes `calls` chat calls (SBX_AGENT_OPTIONS) through the sandbox's
forwarder with the dummy key, prints each status and its environment's SBX_MODEL_* names, and exits 0 only
when the last call succeeded (as an agent CLI gives up when its provider keeps failing)."""

import http.client
import json
import os

options = json.loads(os.environ.get("SBX_AGENT_OPTIONS", "{}"))
port = int(os.environ["SBX_MODEL_BASE_URL"].rsplit(":", 1)[1])
status = None
for i in range(int(options.get("calls", 1))):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = {"model": os.environ["SBX_MODEL_NAME"], "messages": [{"role": "user", "content": f"call {i}"}]}
    conn.request("POST", "/v1/chat/completions", body=json.dumps(body),
                 headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["SBX_MODEL_API_KEY"]})
    response = conn.getresponse()
    status = response.status
    response.read()
    conn.close()
    print("STATUS", status, flush=True)
print("ENV", json.dumps({k: v for k, v in os.environ.items() if k.startswith("SBX_MODEL_")}, sort_keys=True))
raise SystemExit(0 if status == 200 else 1)
