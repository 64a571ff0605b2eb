#!/bin/bash
# Reference solution: treat "-" sizes as 0 and count 4xx as errors too.
set -euo pipefail
cd /app
python3 - <<'PY'
from pathlib import Path
p = Path("/app/summarize.py")
s = p.read_text()
s = s.replace("total_bytes += int(size)", "total_bytes += 0 if size == \"-\" else int(size)")
s = s.replace("if int(status) >= 500:", "if int(status) >= 400:")
p.write_text(s)
PY
