#!/usr/bin/env python3
"""sleeper: wait a few seconds, then deliver the starting code (long enough to lose a node mid-run)."""

import time

time.sleep(6)
