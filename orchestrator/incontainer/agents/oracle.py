#!/usr/bin/env python3
"""oracle: solve a tests task with its reference solution, inside the sandbox like any agent.

The lifecycle writes a copy of this file per run with the task's reference patch (or Harbor solve.sh)
filled into PAYLOAD below (orchestrator/agents/oracle_payload.py); this unfilled copy has nothing to apply and
exits 2. The patch is applied with `git apply` in the workspace and committed; a solve.sh runs with bash
in the workspace. Failing to apply is the agent's failure, as for any agent.
"""

import base64
import json
import os
import subprocess
import sys

PAYLOAD = ""  # filled per run: base64 of {"kind": "patch" | "script", "text": ...}

_GIT = ["git", "-c", "user.name=oracle", "-c", "user.email=oracle@localhost", "-c", "commit.gpgsign=false"]


def main() -> int:
    if not PAYLOAD:
        print("oracle: no reference solution was given to this copy (it runs on tests tasks only)", file=sys.stderr)
        return 2
    payload = json.loads(base64.b64decode(PAYLOAD))
    workspace = os.environ.get("SBX_WORKSPACE", "/workspace")
    task = os.environ.get("SBX_TASK", "the task")
    if payload["kind"] == "script":
        print(f"oracle: running the reference solve.sh of {task}")
        return subprocess.run(["bash", "-s"], input=payload["text"].encode(), cwd=workspace,
                              check=False).returncode
    print(f"oracle: applying the reference patch of {task} ({len(payload['text'].splitlines())} lines)")
    applied = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], input=payload["text"].encode(),
                             cwd=workspace, check=False)
    if applied.returncode != 0:
        print("oracle: the reference patch does not apply", file=sys.stderr)
        return 1
    subprocess.run([*_GIT, "commit", "-q", "-a", "-m", "Apply the reference patch"], cwd=workspace, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
