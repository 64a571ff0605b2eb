"""The copier script itself, run on the host over workspaces made here (fast, no engine): what the walk
keeps and skips, and what it recovers from git without ever reading the repository's own config."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from orchestrator.incontainer import copier
from orchestrator.sandbox.safetar import TarCaps, extract_strictly

SCRIPT = Path(copier.__file__)
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ["PATH"]}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=GIT_ENV).stdout.strip()


def run_copier(ws: Path, tmp: Path, **limits: int) -> tuple[dict, Path]:
    cfg = {"workspace": str(ws), "out": str(tmp / "copy.tar"), "tmp": str(tmp / "ctmp"), "train_file": "train.py",
           "max_entries": 1000, "max_file_bytes": 1 << 20, "max_total_bytes": 4 << 20, "max_git_bytes": 8 << 20,
           "max_commits": 1000, "max_objects": 100000, "max_listed": 100, "work_s": 60, "hold_s": 0, **limits}
    (tmp / "ctmp").mkdir()
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", SCRIPT.read_text(), json.dumps(cfg)],
                          capture_output=True, text=True, timeout=120, cwd="/")
    assert proc.stdout.strip() == "READY", proc.stdout + proc.stderr
    out = tmp / "out"
    out.mkdir()
    with open(tmp / "copy.tar", "rb") as fh:
        extract_strictly(fh, out, TarCaps(10**6, 1 << 30, 1 << 32))
    return json.loads((out / "summary.json").read_text()), out


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    for i in range(3):
        (ws / "train.py").write_text(f"print({i})\n")
        git(ws, "add", "train.py")
        git(ws, "commit", "-q", "-m", f"v{i}")
    return ws


def test_walk_keeps_plain_files_and_reports_the_rest(repo: Path, tmp_path: Path) -> None:
    (repo / "train.py").write_text("print('worktree')\n")
    (repo / "abs").symlink_to("/etc/shadow")
    (repo / "rel").symlink_to("../../../../etc/passwd")
    (repo / "real").mkdir()
    (repo / "real" / "f.txt").write_text("f")
    (repo / "dirlink").symlink_to("real")
    os.mkfifo(repo / "fifo")
    with open(repo / "sparse.bin", "wb") as fh:
        fh.truncate(2 << 30)
    (repo / "big.bin").write_bytes(b"b" * ((1 << 20) + 1))
    (repo / "new\nline-ünï.txt").write_text("u")
    os.mkdir(repo / b"bad\xffname".decode("utf-8", "surrogateescape"))
    summary, out = run_copier(repo, tmp_path)
    kept = sorted(str(p.relative_to(out / "workspace")) for p in (out / "workspace").rglob("*"))
    assert kept == ["new\nline-ünï.txt", "real", "real/f.txt", "train.py"]
    reasons = {s["path"]: s["reason"] for s in summary["skipped"]}
    assert reasons == {"abs": "symlink", "rel": "symlink", "dirlink": "symlink", "fifo": "special",
                       "sparse.bin": "too_big", "big.bin": "too_big", "bad\\xffname": "bad_name"}
    assert summary["truncated"] and summary["files"] == 3 and summary["dirs"] == 1
    assert (out / "workspace" / "train.py").read_text() == "print('worktree')\n"


def test_git_history_comes_from_our_own_git_directory(repo: Path, tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    head = git(repo, "rev-parse", "HEAD")
    first = git(repo, "rev-list", "--max-parents=0", "HEAD")
    (repo / "train.py").write_text("print('amended')\n")
    git(repo, "commit", "-q", "-a", "--amend", "-m", "amended")   # the old HEAD is now unreachable
    amended = git(repo, "rev-parse", "HEAD")
    git(repo, "replace", first, amended)                           # a lie about history, ignored
    git(repo, "config", "core.fsmonitor", f"touch {pwned}")
    git(repo, "config", "core.hooksPath", str(repo / "hooks"))
    (repo / ".gitattributes").write_text("* filter=evil\n")
    git(repo, "config", "filter.evil.smudge", f"touch {pwned}")
    git(repo, "config", "filter.evil.clean", f"touch {pwned}")
    (repo / ".git" / "hooks" / "post-checkout").write_text(f"#!/bin/sh\ntouch {pwned}\n")
    (repo / ".git" / "hooks" / "post-checkout").chmod(0o755)
    git(repo, "status")                          # the trap is live: plain git over this repo springs it
    assert pwned.exists()
    pwned.unlink()
    summary, out = run_copier(repo, tmp_path)
    g = summary["git"]
    assert not pwned.exists()
    assert g["head"] == amended and g["head_ref"] == "refs/heads/main"
    assert g["commits"] == 3 and g["unreachable_commits"] == 1
    assert head in g["train_versions"]
    contents = {(out / "git" / "train" / f"{d}.py").read_text() for d in g["train_versions"].values()}
    assert contents == {"print(0)\n", "print(1)\n", "print(2)\n", "print('amended')\n"}
    assert g["train_versions"][amended] == sha(b"print('amended')\n") and g["head_train_mode"] == "100644"
    assert any("replace ref" in p for p in g["problems"])
    # the bundle clones into a repository that has every commit, the unreachable one included
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(out / "git" / "repo.bundle"), str(clone)], check=True, env=GIT_ENV)
    assert git(clone, "cat-file", "-t", head) == "commit"
    assert git(clone, "show", "HEAD:train.py") == "print('amended')"


def test_a_workspace_without_git(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "train.py").write_text("x\n")
    (ws / ".git").symlink_to("/etc")
    summary, _ = run_copier(ws, tmp_path)
    assert not summary["git"]["present"] and summary["git"]["head"] is None
    assert summary["files"] == 1


def test_entry_cap_keeps_train_py_first(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "aaa").mkdir(parents=True)
    for i in range(50):
        (ws / f"a{i:03}").write_text("")
    (ws / "train.py").write_text("x\n")
    summary, out = run_copier(ws, tmp_path, max_entries=10)
    assert (out / "workspace" / "train.py").exists()
    assert summary["files"] + summary["dirs"] == 10 and summary["walk_stopped"]
    assert summary["skipped_counts"] == {"over_count": 1}


def test_total_cap_skips_what_does_not_fit(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(5):
        (ws / f"f{i}").write_bytes(b"z" * 1000)
    summary, _ = run_copier(ws, tmp_path, max_total_bytes=3500)
    assert summary["bytes"] == 3000 and summary["skipped_counts"] == {"over_total": 2}


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_device_files_are_skipped(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mknod(ws / "null", 0o666 | 0o020000, os.makedev(1, 3))
    summary, _ = run_copier(ws, tmp_path)
    assert summary["skipped"] == [{"path": "null", "reason": "special", "detail": "char device"}]


def test_output_is_a_tar_of_plain_members_only(repo: Path, tmp_path: Path) -> None:
    (repo / "l").symlink_to("/etc/passwd")
    run_copier(repo, tmp_path)
    with tarfile.open(tmp_path / "copy.tar") as tar:
        for m in tar.getmembers():
            assert m.isfile() or m.isdir(), m.name


def test_an_empty_repository(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    summary, out = run_copier(ws, tmp_path)
    g = summary["git"]
    assert g["present"] and g["head"] is None and g["commits"] == 0 and g["bundle"] is None
    assert not (out / "git").exists()


def test_headers_of_the_longest_names_fit_the_tmpfs_allowance(tmp_path: Path) -> None:
    """CopyLimits sizes /out at 6 KiB of tar overhead an entry; names near PATH_MAX are the worst case."""
    from orchestrator.sandbox.copyout import CopyLimits

    ws = tmp_path / "ws"
    deep = ws.joinpath(*(["d" * 250] * 15))
    deep.mkdir(parents=True)
    for i in range(40):
        (deep / f"{i:03}{'ü' * 90}").write_bytes(b"")
    summary, _ = run_copier(ws, tmp_path)
    entries = summary["files"] + summary["dirs"]
    assert entries == 55 and not summary["skipped"]
    limits = CopyLimits(max_entries=entries, max_total_bytes=1, max_git_bytes=1, max_commits=1)
    assert (tmp_path / "copy.tar").stat().st_size <= limits.out_tmpfs_bytes - 32 * (1 << 20)
    assert (tmp_path / "copy.tar").stat().st_size / entries > 4096  # the allowance is not idle


def test_commit_cap(repo: Path, tmp_path: Path) -> None:
    for i in range(30):
        (repo / "train.py").write_text(f"print('more {i}')\n")
        git(repo, "commit", "-q", "-a", "-m", f"more {i}")
    summary, _ = run_copier(repo, tmp_path, max_commits=10)
    g = summary["git"]
    assert g["truncated"] and g["commits"] == 10 and len(g["train_versions"]) <= 20
    assert g["head"] == git(repo, "rev-parse", "HEAD")
