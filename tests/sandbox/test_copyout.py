"""Copy-out against the real engine: a hostile workspace written by the agent user in a real sandbox
container, then copied out of its volume. Every container and volume is labelled sbx.test=copyout and
removed in `finally`."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
import uuid
from pathlib import Path

import docker.errors
import pytest

from orchestrator.failures import CopyOutError, CopyOutTimeout
from orchestrator.sandbox.copyout import CopierAhead, CopyLimits, copy_out_workspace

pytestmark = pytest.mark.docker
LABELS = {"sbx.test": "copyout"}
VERSIONS = [f"# version {i}\nprint('train {i}')\n" for i in range(3)]


@pytest.fixture
def sandbox_image(built_images) -> str:
    return built_images["sandbox"].tag


@pytest.fixture
def volume(docker_client):
    vol = docker_client.volumes.create(name=f"sbx-test-copyout-{uuid.uuid4().hex[:8]}", labels=LABELS)
    try:
        yield vol.name
    finally:
        for c in docker_client.containers.list(all=True, sparse=True, filters={"volume": vol.name}):
            c.remove(force=True)
        vol.remove(force=True)


def fill(client, image: str, volume: str, script: str) -> str:
    """Run `script` as the agent (uid 1000, no network) with the volume at /workspace; the container ends."""
    container = client.containers.create(
        image, ["bash", "-euo", "pipefail", "-c", script], user="1000:1000", network_mode="none",
        cap_drop=["ALL"], security_opt=["no-new-privileges"], working_dir="/workspace",
        volumes={volume: {"bind": "/workspace", "mode": "rw"}}, labels=LABELS)
    try:
        container.start()
        code = container.wait(timeout=300)["StatusCode"]
        out = container.logs().decode(errors="replace")
        assert code == 0, out
        return out
    finally:
        container.remove(force=True)


def no_copier_left(client) -> bool:
    return not client.containers.list(all=True, sparse=True, filters={"label": ["sbx.kind=copier", "sbx.run=test-copyout"]})


def commits_script() -> str:
    lines = ["git init -q -b sbx/run-1", "git config user.name agent", "git config user.email agent@sbx",
             "printf 'data/\\n' > .gitignore"]
    for i, text in enumerate(VERSIONS):
        lines += [f"printf %s {sh_quote(text)} > train.py", "git add -A", f"git commit -q -m v{i}"]
    return "\n".join(lines) + "\n"


def sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def hostile_script(marker: str) -> str:
    return commits_script() + f"""
printf '# uncommitted edit\\n' > train.py
mkdir -p data && printf 'a,b\\n1,2\\n' > data/train.csv
ln -s /etc/shadow shadow_link
ln -s ../../../../etc/passwd escaping_link
mkdir realdir && printf 'inside\\n' > realdir/file.txt && ln -s realdir dir_link && ln -s / root_link
truncate -s 2G sparse.bin
mkfifo a_fifo
printf 'odd\\n' > $'new\\nline-\u00fcn\u00ef\u2603.txt'
# the traps, last: plain git over this repository would run them
git config core.fsmonitor 'touch {marker}; touch /out/pwned #'
git config core.pager 'touch {marker} #'
printf '* filter=evil\\n' > .gitattributes
git config filter.evil.clean 'touch {marker}'
git config filter.evil.smudge 'touch {marker}'
printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/post-checkout
chmod +x .git/hooks/post-checkout
cp .git/hooks/post-checkout .git/hooks/reference-transaction
git status >/dev/null
test -e {marker} && echo TRAP-LIVE
"""


def host_sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_hostile_workspace_comes_out_bounded_and_safe(docker_client, sandbox_image, volume, tmp_path: Path) -> None:
    marker = f"/tmp/pwned-{uuid.uuid4().hex}"
    out = fill(docker_client, sandbox_image, volume, hostile_script(marker))
    assert "TRAP-LIVE" in out  # the hostile config really fires under plain git
    dest = tmp_path / "dest"
    limits = CopyLimits()
    start = time.monotonic()
    try:
        res = copy_out_workspace(docker_client, volume, dest, image=sandbox_image, limits=limits, run_id="test-copyout")
    finally:
        assert no_copier_left(docker_client)
    seconds = time.monotonic() - start

    # bounded: the 2 GiB sparse file never crossed, and it was quick
    assert res.bytes_read < 1 << 20 and res.bytes_read < limits.stream_cap
    assert seconds < 30
    # links, the fifo and the sparse file are absent and reported
    reasons = {s.path: s.reason for s in res.skipped}
    assert reasons == {"shadow_link": "symlink", "escaping_link": "symlink", "dir_link": "symlink",
                       "root_link": "symlink", "sparse.bin": "too_big", "a_fifo": "special"}
    assert res.truncated  # the sparse file was left out by the per-file cap
    kept = {}
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            mode = os.lstat(p).st_mode
            assert stat.S_ISREG(mode) or stat.S_ISDIR(mode), p
            if stat.S_ISREG(mode):
                kept[str(p.relative_to(dest))] = p.read_bytes()
    ws = {k[len("workspace/"):]: v for k, v in kept.items() if k.startswith("workspace/")}
    assert set(ws) == {"train.py", ".gitignore", ".gitattributes", "data/train.csv", "realdir/file.txt",
                       "new\nline-ünï☃.txt"}
    assert res.files == 6 and res.dirs == 2
    # nothing outside dest, nothing run on the host or in the copier's output
    assert [p.name for p in tmp_path.iterdir()] == ["dest"]
    assert not os.path.exists(marker)
    assert not any("pwned" in k for k in kept)
    assert not any(k.startswith("host:") for k in res.skipped_counts)
    shadow = Path("/etc/shadow").read_bytes()[:40]
    assert shadow and not any(shadow in v for v in kept.values())
    # every train.py version, by commit, with the right content; delivered = committed HEAD
    assert res.commits == 3 and res.head_ref == "refs/heads/sbx/run-1"
    assert sorted(res.train_path(d).read_text() for d in set(res.train_versions.values())) == VERSIONS
    assert res.committed_train_sha256 == res.train_versions[res.head_commit] == host_sha(VERSIONS[2].encode())
    assert res.delivered_sha256 == res.committed_train_sha256 and res.delivered == "committed"
    assert res.worktree_train_sha256 == host_sha(b"# uncommitted edit\n")
    assert res.bundle_path is not None and res.bundle_path.is_file()
    assert (dest / "copyout.json").is_file()


def test_bundle_holds_the_whole_history(docker_client, sandbox_image, volume, tmp_path: Path) -> None:
    fill(docker_client, sandbox_image, volume, commits_script() + "git commit -q --amend -m amended\n")
    res = copy_out_workspace(docker_client, volume, tmp_path / "d", image=sandbox_image, run_id="test-copyout")
    assert res.commits == 3 and res.unreachable_commits == 1 and len(res.train_versions) == 4
    clone = tmp_path / "clone"
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": os.environ["PATH"]}
    subprocess.run(["git", "clone", "-q", str(res.bundle_path), str(clone)], check=True, env=env)
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True, env=env).stdout.strip()
    assert head == res.head_commit
    assert host_sha((clone / "train.py").read_bytes()) == res.delivered_sha256


@pytest.mark.slow
def test_entry_cap(docker_client, sandbox_image, volume, tmp_path: Path) -> None:
    fill(docker_client, sandbox_image, volume, commits_script() + """
mkdir many
python3 -I -S -c "
for i in range(25000):
    open(f'many/f{i:05}', 'w').close()
"
""")
    start = time.monotonic()
    res = copy_out_workspace(docker_client, volume, tmp_path / "d", image=sandbox_image, run_id="test-copyout")
    seconds = time.monotonic() - start
    assert res.truncated and res.skipped_counts == {"over_count": 1}
    assert res.files + res.dirs == CopyLimits().max_entries
    assert (res.workspace_dir / "train.py").read_text() == VERSIONS[2]
    assert res.delivered_sha256 == host_sha(VERSIONS[2].encode())
    assert seconds < 60


def test_byte_caps(docker_client, sandbox_image, volume, tmp_path: Path) -> None:
    fill(docker_client, sandbox_image, volume, commits_script() + """
head -c 3000000 /dev/urandom > big.bin
for i in 1 2 3 4; do head -c 900000 /dev/urandom > part$i.bin; done
""")
    limits = CopyLimits(max_file_bytes=2_000_000, max_total_bytes=2_000_000)
    res = copy_out_workspace(docker_client, volume, tmp_path / "d", image=sandbox_image, limits=limits,
                             run_id="test-copyout")
    assert res.skipped_counts == {"too_big": 1, "over_total": 2}
    assert res.bytes <= 2_000_000 and res.truncated
    assert res.bytes_read < limits.stream_cap


def test_refuses_a_volume_in_use(docker_client, sandbox_image, volume, tmp_path: Path) -> None:
    busy = docker_client.containers.run(sandbox_image, ["sleep", "60"], detach=True, network_mode="none",
                                        volumes={volume: {"bind": "/workspace", "mode": "rw"}}, labels=LABELS)
    try:
        with pytest.raises(CopyOutError, match="running"):
            copy_out_workspace(docker_client, volume, tmp_path / "d", image=sandbox_image, run_id="test-copyout")
        assert not (tmp_path / "d").exists()
    finally:
        busy.remove(force=True)


def test_missing_volume_and_timeout_are_infra_errors(docker_client, sandbox_image, volume, tmp_path: Path) -> None:
    with pytest.raises(CopyOutError, match="no volume"):
        copy_out_workspace(docker_client, "sbx-test-no-such-volume", tmp_path / "a", image=sandbox_image)
    fill(docker_client, sandbox_image, volume, commits_script())
    with pytest.raises(CopyOutTimeout):
        copy_out_workspace(docker_client, volume, tmp_path / "b", image=sandbox_image,
                           limits=CopyLimits(timeout_s=1e-6), run_id="test-copyout")
    assert no_copier_left(docker_client)
    assert not (tmp_path / "b").exists()
    with pytest.raises(docker.errors.NotFound):
        docker_client.volumes.get("sbx-test-no-such-volume")


def test_a_copier_out_of_time_for_its_go_is_a_timeout(docker_client, sandbox_image) -> None:
    """The copier's own wait for the go runs on the same limit: its "no go" line (the very text copier.py
    prints) is a CopyOutTimeout, and so is a go the engine refuses, once past the limit, because the copier has
    exited; before the limit that refusal stays the engine's error."""
    import re

    from orchestrator.sandbox.container import ContainerSpec, create_box
    from orchestrator.sandbox.copyout import COPIER_SOURCE, _give_go, _wait_for

    no_go = re.search(r'print\("(FAILED no go[^"]*)"', COPIER_SOURCE)
    assert no_go, "copier.py no longer prints the no-go line copyout.py maps to a timeout"
    box = create_box(docker_client, ContainerSpec(
        kind="copier", image=sandbox_image, command=["sh", "-c", f"echo WAITING; echo '{no_go.group(1)}'; exec sleep 60"],
        user="1000:1000", run_id="test-copyout", keep_log=True, labels=LABELS, deadline_s=60))
    try:
        box.start()
        _wait_for(box, b"WAITING", time.monotonic() + 20)
        with pytest.raises(CopyOutTimeout, match="no go"):
            _wait_for(box, b"READY", time.monotonic() + 20)
        box.container.kill()  # stopped by us (exiting by itself could race box.start's check at start)
        box.container.wait(timeout=20)  # exited: the engine refuses a signal now
        with pytest.raises(docker.errors.APIError):
            _give_go(box, time.monotonic() + 20)
        with pytest.raises(CopyOutTimeout, match="past the copy-out time limit"):
            _give_go(box, time.monotonic() - 1)
    finally:
        box.remove()


@pytest.mark.parametrize(("script", "outcome"), [
    ("sleep 0.3; echo noise; echo READY; sleep 30", None),
    ("echo 'FAILED OSError: disk'; sleep 30", "the copier failed: OSError: disk"),
    ("sleep 0.5; echo half; exit 3", "exited before it said READY: half"),
    ("sleep 30", "timeout"),
])
def test_wait_ready_follows_the_log(docker_client, sandbox_image, script: str, outcome: str | None) -> None:
    """READY is seen as it is printed (not a poll later); FAILED and an early exit say why; the limit holds."""
    from orchestrator.sandbox.container import ContainerSpec, create_box
    from orchestrator.sandbox.copyout import _wait_for

    box = create_box(docker_client, ContainerSpec(kind="copier", image=sandbox_image, command=["sh", "-c", script],
                                                  user="1000:1000", run_id="test-copyout", keep_log=True,
                                                  labels=LABELS, deadline_s=60))
    try:
        box.start()
        start = time.monotonic()
        if outcome is None:
            _wait_for(box, b"READY", start + 20)
            assert time.monotonic() - start < 0.3 + 0.2
        elif outcome == "timeout":
            with pytest.raises(CopyOutTimeout):
                _wait_for(box, b"READY", start + 0.5)
            assert time.monotonic() - start < 0.5 + 0.3
        else:
            with pytest.raises(CopyOutError, match=outcome):
                _wait_for(box, b"READY", start + 20)
            assert time.monotonic() - start < 5
    finally:
        box.remove()


def test_a_copier_started_ahead_reads_only_after_its_go(docker_client, sandbox_image, volume, tmp_path: Path) -> None:
    """Started while a writer still runs, it waits: the go is refused while the writer runs, and what the
    writer wrote after the copier started is what comes out once it has stopped."""
    busy = docker_client.containers.run(sandbox_image, ["sleep", "60"], detach=True, network_mode="none",
                                        volumes={volume: {"bind": "/workspace", "mode": "rw"}}, labels=LABELS)
    try:
        early = CopierAhead(docker_client, volume, image=sandbox_image, run_id="test-copyout")
        with pytest.raises(CopyOutError, match="running"):
            copy_out_workspace(docker_client, volume, tmp_path / "refused", image=sandbox_image, run_id="test-copyout",
                               ahead=early)
        assert no_copier_left(docker_client)
        ahead = CopierAhead(docker_client, volume, image=sandbox_image, run_id="test-copyout")
        time.sleep(1.0)  # started and waiting
        fill(docker_client, sandbox_image, volume, commits_script())
    finally:
        busy.remove(force=True)
    res = copy_out_workspace(docker_client, volume, tmp_path / "d", image=sandbox_image, run_id="test-copyout",
                             ahead=ahead)
    assert res.commits == 3 and (res.workspace_dir / "train.py").read_text() == VERSIONS[2]
    assert no_copier_left(docker_client)
    unused = CopierAhead(docker_client, volume, image=sandbox_image, run_id="test-copyout")
    unused.discard()
    assert no_copier_left(docker_client)
