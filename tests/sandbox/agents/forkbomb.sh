#!/bin/bash
# Hostile agent: a fork bomb. The pids limit holds it; the budget (its shells are the agent's tools), the hard
# stop or the wall clock ends the run.
bomb() { bomb | bomb & }
bomb
sleep 3600
