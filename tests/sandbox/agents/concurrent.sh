#!/bin/bash
# Hostile agent: 60 concurrent run_experiment calls against the limit.
for i in $(seq 1 60); do ./run_experiment "call $i" > "/tmp/exp-$i.log" 2>&1 & done
wait
grep -h '^EXPERIMENT' /tmp/exp-*.log > /workspace/experiments.log
exit 0
