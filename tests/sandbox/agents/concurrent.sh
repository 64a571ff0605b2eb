#!/bin/bash
# Hostile agent: 60 concurrent run_experiment calls against the limit. What is counted is the point, not
# the model: train.py is replaced by a cheap one that still burns some CPU in its own process (so each
# counted experiment shows cpu_seconds > 0) and prints the eval line, so 40 experiments cost seconds, not
# forty XGBoost fits on two cores.
cat > train.py <<'PY'
total = 0
for i in range(3_000_000):
    total += i * i
print(f"Eval AUC: 0.5 ({total % 7})")
PY
for i in $(seq 1 60); do ./run_experiment "call $i" > "/tmp/exp-$i.log" 2>&1 & done
wait
grep -h '^EXPERIMENT' /tmp/exp-*.log > /workspace/experiments.log
exit 0
