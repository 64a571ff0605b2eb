from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.ledger import Ledger


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    led = Ledger(tmp_path / "ledger.sqlite")
    try:
        yield led
    finally:
        led.close()
