#!/bin/bash
# Hostile agent: start an experiment, then SIGSTOP every process it may signal (the experiment, its client,
# anything the host runs as the agent) and go quiet. Every limit must still be checked on time.
# The experiment sleeps first, so it is still running when it is stopped: on a quiet machine a real
# training finished before the stop (2.7 s) and the experiment ended ok instead of at its time limit.
sed -i '0,/^import /s//import time; time.sleep(30)\nimport /' train.py
./run_experiment wedge > /tmp/exp.log 2>&1 &
sleep 3
for p in /proc/[0-9]*; do pid=${p##*/}; [ "$pid" = "$$" ] || kill -STOP "$pid" 2>/dev/null; done
exec sleep 600
