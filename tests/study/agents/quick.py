#!/usr/bin/env python3
"""quick: spend one counted experiment on the starting code, then deliver it (a short agent for fleet tests)."""

import subprocess
import sys

sys.exit(subprocess.run(["./run_experiment"]).returncode)
