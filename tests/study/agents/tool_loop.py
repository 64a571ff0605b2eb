#!/usr/bin/env python3
"""A scripted agent with a model endpoint, as a CLI works: it sends the conversation with a `bash` tool through
the sandbox's forwarder (Chat Completions), "runs" each tool call in a scripted environment (the output is
made from the command; nothing is executed), sends the result back, and stops when the model stops calling
tools. It delivers the starting code."""

import http.client
import json
import os

port = int(os.environ["SBX_MODEL_BASE_URL"].rsplit(":", 1)[1])
headers = {"content-type": "application/json", "authorization": "Bearer " + os.environ["SBX_MODEL_API_KEY"]}
tools = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a shell command in the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    }
]
messages = [{"role": "user", "content": "Read program.md and follow it exactly."}]
for step in range(20):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    body = {"model": os.environ["SBX_MODEL_NAME"], "messages": messages, "tools": tools}
    conn.request("POST", "/v1/chat/completions", body=json.dumps(body), headers=headers)
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    if response.status != 200:
        raise SystemExit(f"model call {step}: status {response.status}")
    message = data["choices"][0]["message"]
    messages.append(message)
    calls = message.get("tool_calls") or []
    if not calls:
        break
    for call in calls:
        command = json.loads(call["function"]["arguments"])["command"]
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": f"ran: {command}\nok\n"})
print(f"tool_loop: {step + 1} model calls", flush=True)
