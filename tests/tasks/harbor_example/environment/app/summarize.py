"""Summarize a web server access log (common log format) into a small JSON report."""

import json
import re
import sys
from collections import Counter

LINE = re.compile(r'^(\S+) \S+ \S+ \[[^\]]+\] "(\S+) (\S+) [^"]*" (\d{3}) (\S+)$')


def summarize(lines):
    requests = 0
    total_bytes = 0
    errors = 0
    paths = Counter()
    for line in lines:
        m = LINE.match(line.strip())
        if not m:
            continue
        _host, _method, path, status, size = m.groups()
        requests += 1
        total_bytes += int(size)
        if int(status) >= 500:
            errors += 1
        paths[path] += 1
    top = [{"path": p, "hits": n} for p, n in sorted(paths.items(), key=lambda kv: (-kv[1], kv[0]))[:3]]
    return {"requests": requests, "bytes": total_bytes, "errors": errors, "top_paths": top}


def main(argv):
    src, dest = argv[1], argv[2]
    with open(src, encoding="utf-8") as f:
        report = summarize(f)
    with open(dest, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv)
