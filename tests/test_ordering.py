"""The order tests start in is the same in every pytest-xdist worker: workers that collect different orders
refuse to run ("Different tests were collected between gw0 and gw1"), and each worker has its own hash seed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: orders fake items by tests/conftest.py's rule with every duration tied, then prints the order
_SCRIPT = """
import json, sys
from types import SimpleNamespace
import tests.conftest as conftest
conftest.DURATIONS = __import__("pathlib").Path(sys.argv[1])
names = json.loads(conftest.DURATIONS.read_text())["files"]
items = [SimpleNamespace(nodeid=f"{name}::t", keywords={}) for name in sorted(names)]
conftest._heaviest_files_first(items)
print(" ".join(item.nodeid for item in items))
"""


def test_files_with_tied_durations_start_in_one_order_whatever_the_hash_seed(tmp_path: Path) -> None:
    durations = tmp_path / "durations.json"
    # twelve files of one duration, a 2.5 s head: which five go first is decided by the tie alone
    durations.write_text(json.dumps({"files": {f"tests/t{i:02}.py": 0.5 for i in range(12)}}))
    orders = set()
    for seed in ("1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "SBX_TEST_ENGINE_FREE_FIRST_S": "2.5"}
        out = subprocess.run([sys.executable, "-c", _SCRIPT, str(durations)], cwd=ROOT, env=env, check=True,
                             capture_output=True, text=True).stdout
        orders.add(out.strip())
    assert len(orders) == 1, orders
    assert orders.pop().split()[:5] == [f"tests/t{i:02}.py::t" for i in range(5)]
