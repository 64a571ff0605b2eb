#!/bin/bash
# Hostile agent: fill the workspace with what takes long to copy out (768 MB that does not compress), so that
# the copy-out runs past its time limit: an attempt voided at the agent's choosing, unless it counts.
for i in $(seq 1 12); do head -c 64000000 /dev/urandom > /workspace/w$i.bin; done
exit 0
