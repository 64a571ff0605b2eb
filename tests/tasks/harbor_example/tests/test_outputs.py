"""Checks of /app/summarize.py on logs the agent never saw (stdlib only: the verifier has no network)."""

import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def run(log: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        subprocess.run([sys.executable, "/app/summarize.py", str(log), str(out)], check=True, timeout=30)
        return json.loads(out.read_text())


class TestSummarize(unittest.TestCase):
    def test_dash_sizes_count_as_zero(self):
        report = run(FIXTURES / "mixed.log")
        self.assertEqual(report["requests"], 6)
        self.assertEqual(report["bytes"], 2048 + 0 + 512 + 0 + 100 + 2048)

    def test_errors_count_4xx_and_5xx(self):
        self.assertEqual(run(FIXTURES / "mixed.log")["errors"], 3)

    def test_top_paths_and_format_unchanged(self):
        report = run(FIXTURES / "mixed.log")
        self.assertEqual(sorted(report), ["bytes", "errors", "requests", "top_paths"])
        self.assertEqual(report["top_paths"][0], {"path": "/", "hits": 2})


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
