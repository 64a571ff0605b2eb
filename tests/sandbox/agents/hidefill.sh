#!/bin/bash
# Hostile agent: fill the workspace past its cap inside a folder nobody but root may read (`du` as the agent
# skipped it and saw a small workspace), then stop every process it may signal and wait.
mkdir -p /workspace/hidden
dd if=/dev/urandom of=/workspace/hidden/fill.bin bs=1M count=96 status=none
chmod 000 /workspace/hidden
for p in /proc/[0-9]*; do pid=${p##*/}; [ "$pid" = "$$" ] || kill -STOP "$pid" 2>/dev/null; done
sleep 600
