#!/bin/bash
# A well-behaved agent that takes a few seconds: long enough to be caught mid-run by a test.
sleep "${SLOW_AGENT_SECONDS:-4}"
echo "slow agent done"
