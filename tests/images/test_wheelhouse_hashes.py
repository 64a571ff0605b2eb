"""The images' Python stack is pinned by the sha256 of each wheel: the shipped lock names one for every pin,
and a wheelhouse download refuses bytes the lock does not name (the index's real wheel under a wrong hash
stands for an index that serves other bytes under a pinned name)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from orchestrator.failures import ImageError
from orchestrator.images.wheelhouse import ensure_wheelhouse, install_lock, pinned, pinned_hashes

LOCK = Path(__file__).resolve().parents[2] / "images" / "requirements.lock"
FLEET_LOCK = LOCK.parent / "fleet" / "requirements.lock"
#: a small pure-Python pin of the shipped lock
SMALL = "threadpoolctl"


@pytest.mark.parametrize("lock", [LOCK, FLEET_LOCK], ids=["sandbox", "fleet"])
def test_every_pin_of_an_images_lock_has_a_hash(lock: Path) -> None:
    hashes = pinned_hashes(lock)
    assert set(hashes) == set(pinned(lock)) and len(hashes) >= 10
    assert [n for n, h in hashes.items() if not h] == []  # a sdist-only pin carries its sdist's sha256


def test_the_image_installs_the_files_the_lock_names_and_refuses_a_changed_one(tmp_path: Path) -> None:
    wheels = tmp_path / "wheelhouse"
    wheels.mkdir()
    good, built = b"the wheel the index served", b"a wheel built here from its checked sdist"
    (wheels / "good_pkg-1.0-py3-none-any.whl").write_bytes(good)
    (wheels / "made_here-2.0-py3-none-any.whl").write_bytes(built)
    lock = tmp_path / "requirements.lock"
    sha = hashlib.sha256(good).hexdigest()
    lock.write_text(f"good-pkg==1.0 --hash=sha256:{sha}\nmade-here==2.0 --hash=sha256:{'1' * 64}  # sdist\n")
    assert install_lock(lock, wheels) == (f"good_pkg==1.0 --hash=sha256:{sha}\n"
                                          f"made_here==2.0 --hash=sha256:{hashlib.sha256(built).hexdigest()}\n")
    (wheels / "good_pkg-1.0-py3-none-any.whl").write_bytes(b"other bytes under the pinned name")
    with pytest.raises(ImageError, match=f"pins sha256:{sha}"):
        install_lock(lock, wheels)
    (wheels / "good_pkg-1.0-py3-none-any.whl").unlink()
    with pytest.raises(ImageError, match="no wheel for good_pkg==1.0"):
        install_lock(lock, wheels)


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
