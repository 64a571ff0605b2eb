"""The host reads an agent's folder: never through a link, never blocked by a FIFO, bounded, and as root."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from orchestrator.sandbox.hostfs import HostTree


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A host folder the agent must never reach: a secret and 8 MiB of data."""
    d = tmp_path / "host"
    d.mkdir()
    (d / "secret").write_text("host secret")
    (d / "big.bin").write_bytes(os.urandom(8 << 20))
    return d


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    d = tmp_path / "ws"
    d.mkdir()
    (d / "train.py").write_text("print('hi')\n")
    return d


def test_a_regular_file_is_read_up_to_its_cap(ws: Path) -> None:
    tree = HostTree(ws)
    got = tree.read_file("train.py", 100)
    assert got is not None and got.data == b"print('hi')\n" and not got.truncated
    (ws / "big.py").write_bytes(b"x" * 5000)
    cut = tree.read_file("big.py", 1000)
    assert cut is not None and cut.data == b"x" * 1000 and cut.truncated and cut.size == 5000
    assert tree.read_file("missing.py", 10) is None
    with pytest.raises(ValueError):
        tree.read_file("../etc/passwd", 10)


def test_no_link_is_followed_anywhere_on_the_path(ws: Path, outside: Path) -> None:
    tree = HostTree(ws)
    (ws / "link.py").symlink_to(outside / "secret")
    (ws / "dirlink").symlink_to(outside)
    (ws / ".git").symlink_to(outside)
    assert tree.read_file("link.py", 100) is None
    assert tree.read_file("dirlink/secret", 100) is None
    assert tree.read_file(".git/secret", 100) is None
    (ws / "sub").mkdir()
    (ws / "sub" / "up").symlink_to("..")
    assert tree.read_file("sub/up/train.py", 100) is None


def test_a_fifo_or_a_folder_is_not_read_and_does_not_block(ws: Path) -> None:
    os.mkfifo(ws / "fifo.py")
    (ws / "folder.py").mkdir()
    tree = HostTree(ws)
    start = time.monotonic()
    assert tree.read_file("fifo.py", 100) is None
    assert tree.read_file("folder.py", 100) is None
    assert time.monotonic() - start < 1.0


def test_disk_use_counts_allocated_bytes_once_and_never_through_links(ws: Path, outside: Path) -> None:
    tree = HostTree(ws)
    base = tree.disk_usage()
    assert base.complete
    data = os.urandom(4 << 20)
    (ws / "a.bin").write_bytes(data)
    os.link(ws / "a.bin", ws / "hard.bin")            # a hard link is the same blocks
    (ws / "out").symlink_to(outside)                   # 8 MiB behind a link: not the workspace's
    (ws / "big.bin").symlink_to(outside / "big.bin")
    with open(ws / "sparse.bin", "wb") as f:           # 1 GiB apparent, nothing allocated
        f.truncate(1 << 30)
    used = tree.disk_usage()
    assert used.complete and used.entries == base.entries + 5
    assert 4 << 20 <= used.bytes - base.bytes < (4 << 20) + (256 << 10)


def test_an_unreadable_folder_is_measured_all_the_same(ws: Path) -> None:
    """The attack that passed a 512 MB cap with 1.23 GB: `du` as the agent could not read a 000 folder."""
    if os.geteuid() != 0:
        pytest.skip("the host side runs as root")
    hidden = ws / "hidden"
    hidden.mkdir()
    (hidden / "fill.bin").write_bytes(os.urandom(6 << 20))
    hidden.chmod(0)
    try:
        used = HostTree(ws).disk_usage()
        assert used.complete and used.bytes >= 6 << 20
        du = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "du", "-sk", str(ws)],
                            capture_output=True, text=True)
        assert du.returncode != 0 and "Permission denied" in du.stderr  # what the old measurement saw
    finally:
        hidden.chmod(0o755)


def test_bounds_make_a_walk_incomplete_not_endless(ws: Path) -> None:
    for i in range(300):
        (ws / f"f{i}").touch()
    few = HostTree(ws).disk_usage(max_entries=100)
    assert not few.complete and "more than 100 entries" in few.problem
    deep = ws
    for _ in range(40):
        deep = deep / "d"
        deep.mkdir()
    nested = HostTree(ws).disk_usage(max_depth=20)
    assert not nested.complete and "deeper than 20" in nested.problem
    slow = HostTree(ws).disk_usage(time_limit_s=0.0)
    assert not slow.complete and "took more than" in slow.problem
    assert not HostTree(ws / "nope").disk_usage().complete


def test_a_walk_racing_a_folder_swapped_for_a_link_stays_inside(ws: Path, outside: Path) -> None:
    """While the host walks, the agent swaps a folder for a link to the host's 8 MiB folder, over and over."""
    (ws / "d").mkdir()
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                os.rename(ws / "d", ws / "d.old")
                (ws / "d").symlink_to(outside)
                os.unlink(ws / "d")
                os.rename(ws / "d.old", ws / "d")
            except OSError:
                pass

    t = threading.Thread(target=swap)
    t.start()
    try:
        for _ in range(200):
            used = HostTree(ws).disk_usage()
            assert used.bytes < 1 << 20
    finally:
        stop.set()
        t.join()
