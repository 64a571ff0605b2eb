#!/usr/bin/env python3
"""noop: deliver the starting code untouched. The floor every other agent is compared with."""

import os
import sys


def main() -> int:
    print(f"noop: delivering the starting code of {os.environ.get('SBX_TASK', 'the task')} untouched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
