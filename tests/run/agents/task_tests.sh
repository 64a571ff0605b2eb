#!/bin/bash
# A scripted coding agent in a tests task's sandbox: it runs one test file of the repository with the
# task's own Python and pytest, then burns 3 CPU-seconds in a Python child (the meter must count them).
# What it saw goes to agent.log in the workspace (delivered, read by the test).
{
    python --version
    python -c "import sys, sqlparse; print('imported', sqlparse.__file__, 'gate', sys._sbx_gate_ran)"
    python -m pytest -q -p no:cacheprovider tests/test_tokenize.py 2>&1 | tail -1
    echo "pytest exit ${PIPESTATUS[0]}"
    python -c '
import time
start = time.process_time()
while time.process_time() - start < 3.0:
    pass
print("burned", round(time.process_time() - start, 2))'
    echo "burn exit $?"
} > agent.log 2>&1
