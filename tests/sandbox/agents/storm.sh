#!/bin/bash
# Hostile agent: compute spread over thousands of short processes (each a few ms, ended long before anything
# could move it), then a subshell's `times`: the storm's own account of its CPU, to compare with the meter's.
bash -c 'for i in $(seq 1 1500); do sh -c "i=0; while [ \$i -lt 3000 ]; do i=\$((i+1)); done"; done; times' > /workspace/storm.txt 2>&1
git add storm.txt && git -c user.name=a -c user.email=a@a commit -qm storm
exit 0
