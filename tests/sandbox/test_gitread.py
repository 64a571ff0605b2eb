"""HEAD and train.py's state read from a real git repository as plain files, matched against git itself."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.sandbox.gitread import Head, blob_sha, differs_from_commit, read_head, read_object
from orchestrator.sandbox.hostfs import HostTree

ENV = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "a",
       "GIT_COMMITTER_EMAIL": "a@a", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=ENV).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    git(r, "init", "-q", "-b", "sbx/run-1")
    (r / "train.py").write_text("print(1)\n")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "one")
    return r


def test_head_matches_git_for_a_loose_ref_packed_refs_and_a_detached_head(repo: Path) -> None:
    tree = HostTree(repo)
    assert read_head(tree) == Head(git(repo, "rev-parse", "HEAD"), "refs/heads/sbx/run-1")
    (repo / "train.py").write_text("print(2)\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git/refs/heads/sbx/run-1").exists()
    assert read_head(tree) == Head(git(repo, "rev-parse", "HEAD"), "refs/heads/sbx/run-1")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert read_head(tree) == Head(git(repo, "rev-parse", "HEAD"), None)


def test_train_py_against_head_agrees_with_git_diff(repo: Path) -> None:
    tree = HostTree(repo)
    head = read_head(tree).commit
    assert head is not None
    body = (repo / "train.py").read_bytes()
    assert blob_sha(body) == git(repo, "hash-object", "train.py")
    assert differs_from_commit(tree, head, "train.py", body) is False
    (repo / "train.py").write_text("print('changed')\n")
    assert differs_from_commit(tree, head, "train.py", (repo / "train.py").read_bytes()) is True
    assert differs_from_commit(tree, head, "train.py", None) is True       # deleted
    assert differs_from_commit(tree, head, "other.py", None) is False      # absent in both
    kind, content = read_object(tree, head) or ("", b"")
    assert kind == "commit" and content.startswith(b"tree ")


def test_what_cannot_be_read_plainly_is_unknown_never_a_guess(repo: Path, tmp_path: Path) -> None:
    tree = HostTree(repo)
    head = read_head(tree).commit
    assert head is not None
    git(repo, "gc", "-q", "--prune=now")  # every object packed
    assert read_object(tree, head) is None
    assert differs_from_commit(tree, head, "train.py", b"print(1)\n") is None
    assert read_head(tree).commit == head  # HEAD itself still reads (packed-refs)


@pytest.mark.parametrize("head_text", [
    "ref: ../../../../etc/passwd\n", "ref: refs/heads/../../config\n", "ref: refs/heads/.hidden\n",
    "garbage\n", "ref: refs/heads/x\x00y\n", "x" * 10_000,
])
def test_a_hostile_head_yields_nothing(repo: Path, head_text: str) -> None:
    (repo / ".git" / "HEAD").write_text(head_text)
    assert read_head(HostTree(repo)).commit is None


def test_links_in_the_git_folder_are_not_followed(repo: Path, tmp_path: Path) -> None:
    real = git(repo, "rev-parse", "HEAD")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ref = repo / ".git/refs/heads/sbx/run-1"
    (elsewhere / "ref").write_text(real + "\n")
    ref.unlink()
    ref.symlink_to(elsewhere / "ref")
    assert read_head(HostTree(repo)).commit is None
    obj = repo / ".git/objects" / real[:2] / real[2:]
    obj.rename(elsewhere / "obj")
    obj.symlink_to(elsewhere / "obj")
    assert read_object(HostTree(repo), real) is None


def test_an_object_that_inflates_past_its_cap_or_lies_about_its_name_is_refused(repo: Path) -> None:
    import zlib

    bomb = zlib.compress(b"blob 67108864\0" + b"\0" * (64 << 20), 9)
    fake = "ab" * 20
    (repo / ".git/objects/ab").mkdir(exist_ok=True)
    (repo / ".git/objects/ab" / fake[2:]).write_bytes(bomb)
    assert read_object(HostTree(repo), fake) is None
    real = git(repo, "rev-parse", "HEAD")
    path = repo / ".git/objects" / real[:2] / real[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"commit 5\0hello"))
    assert read_object(HostTree(repo), real) is None
