#!/bin/bash
# Hostile agent: fill the workspace past its disk cap, then wait.
dd if=/dev/zero of=/workspace/filler.bin bs=1M count=160 status=none
sleep 600
