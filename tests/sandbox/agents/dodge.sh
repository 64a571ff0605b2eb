#!/bin/bash
# Hostile agent: a forkserver pool (metered: inherits `py`) and a `python -S` busy loop (dodges the gate;
# the container total must reach the hard stop and kill everything).
cat > /tmp/pool.py <<'PY'
import multiprocessing as mp, time
def work(_):
    t = time.process_time()
    while time.process_time() - t < 1.0: pass
if __name__ == "__main__":
    with mp.get_context("forkserver").Pool(2) as p:
        p.map(work, range(4))
    print("pool done")
PY
python3 /tmp/pool.py > /workspace/pool.log 2>&1
python3 -S -c 'while True: pass'
