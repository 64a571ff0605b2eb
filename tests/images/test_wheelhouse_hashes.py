"""The images' Python stack is pinned by the sha256 of each wheel: the shipped lock names one for every pin,
and a wheelhouse download refuses bytes the lock does not name (the index's real wheel under a wrong hash
stands for an index that serves other bytes under a pinned name)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from orchestrator.failures import ImageError
from orchestrator.images.wheelhouse import ensure_wheelhouse, pinned, pinned_hashes, sdist_only

LOCK = Path(__file__).resolve().parents[2] / "images" / "requirements.lock"
#: a small pure-Python pin of the shipped lock
SMALL = "threadpoolctl"


def test_every_pin_of_the_images_lock_has_a_wheel_hash() -> None:
    hashes = pinned_hashes(LOCK)
    assert set(hashes) == set(pinned(LOCK)) and len(hashes) >= 10
    assert [n for n, h in hashes.items() if not h and n not in sdist_only(LOCK)] == []


def test_a_download_keeps_the_locked_bytes_and_refuses_others(tmp_path: Path) -> None:
    version, (sha,) = pinned(LOCK)[SMALL], pinned_hashes(LOCK)[SMALL]
    good = tmp_path / "good"
    good.mkdir()
    (good / "requirements.lock").write_text(f"{SMALL}=={version} --hash=sha256:{sha}\n")
    (wheel,) = ensure_wheelhouse(good / "requirements.lock", good)
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == sha

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "requirements.lock").write_text(f"{SMALL}=={version} --hash=sha256:{'0' * 64}\n")
    with pytest.raises(ImageError, match="(?i)hash"):
        ensure_wheelhouse(bad / "requirements.lock", bad)
    assert list(bad.glob("*.whl")) == []
