"""Copy a run's workspace out of its volume, safely, after the sandbox has stopped.

Measured here: `docker cp` keeps absolute symlinks, aborts half way on an escaping relative link and turns a
2 GiB sparse file into a 2 GiB archive; and `get_archive` cannot see a tmpfs mount (it returned an empty
folder). So a short-lived copier container (sandbox image, no network, no capabilities, uid 1000,
read-only root, pids and memory limits) mounts the volume read-only and runs the trusted script
`orchestrator/incontainer/copier.py` (`python3 -I -S -c`, nothing imported from the workspace). It writes
one bounded tar to a size-capped tmpfs; the host reads it with `cat` over exec, stops reading past a byte
cap, and parses it strictly itself (`safetar`). Git never runs on the host over the agent's repository; in
the copier it runs over a git directory of ours (see copier.py). Hostile content is skipped and reported,
never raised.
The copier reads nothing until the host's go (SIGHUP), given once no running container but the copier
mounts the volume, so it can be started while the sandbox is still stopping (`CopierAhead`).
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import docker
import docker.errors
import requests.exceptions

from orchestrator import paths
from orchestrator.failures import CopyOutError, CopyOutTimeout, EngineUnavailable, ImageError
from orchestrator.log import get_logger, timed
from orchestrator.sandbox import safetar
from orchestrator.sandbox.container import Box, ContainerSpec, Mount, create_box
from orchestrator.sandbox.safetar import Skip, TarCaps

log = get_logger(__name__)

MiB = 1 << 20
COPIER_SOURCE = paths.incontainer_source("copier.py")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_TRAIN_MEMBER = re.compile(r"^git/train/([0-9a-f]{64})\.py$")
_SUMMARY_MAX = 16 * MiB
_LOG_TAIL = 64 * 1024  # of the copier's log, kept to report why it failed
_NO_GO = b"FAILED no go from the host"  # incontainer/copier.py: its wait for the go ran out


@dataclass(frozen=True)
class CopyLimits:
    """Caps of one copy-out. Files past a cap are skipped and reported; `truncated` says one bit."""

    max_entries: int = 20_000            # files + directories kept from the working tree
    max_file_bytes: int = 64 * MiB       # one file (working tree or a train.py version)
    max_total_bytes: int = 512 * MiB     # all working-tree file data
    max_git_bytes: int = 256 * MiB       # the bundle plus every train.py version
    max_commits: int = 10_000            # commit objects looked at
    timeout_s: float = 300.0             # the copier's start (to WAITING), and again the go to the last byte
    max_listed_skips: int = 1000         # skipped entries listed one by one (all are counted)

    def __post_init__(self) -> None:
        for name in ("max_entries", "max_file_bytes", "max_total_bytes", "max_git_bytes", "max_commits"):
            if getattr(self, name) < 1:
                raise ValueError(f"CopyLimits.{name} must be positive")
        if self.timeout_s <= 0:
            raise ValueError("CopyLimits.timeout_s must be positive")

    @property
    def max_objects(self) -> int:
        """Lines of the git object listing read at most (commits are found among them)."""
        return 200 * self.max_commits

    @property
    def out_tmpfs_bytes(self) -> int:
        """The copier's /out: file data; per entry up to 6 KiB of headers and padding (a 4,096-byte name
        needs a PAX header of 9 blocks); per train.py version 2 KiB; 32 MiB for the summary and slack."""
        return (self.max_total_bytes + self.max_git_bytes + self.max_entries * 6144 + self.max_commits * 2048
                + 32 * MiB)

    @property
    def tmp_tmpfs_bytes(self) -> int:
        """The copier's /tmp: our git directory and the bundle before it joins the tar."""
        return self.max_git_bytes + 32 * MiB

    @property
    def memory_bytes(self) -> int:
        """tmpfs pages count against the copier's memory cgroup; plus Python, git and one file buffer."""
        return self.out_tmpfs_bytes + self.tmp_tmpfs_bytes + 2 * self.max_file_bytes + 384 * MiB

    @property
    def stream_cap(self) -> int:
        """Bytes the host reads from the engine at most: the tar cannot be larger than the tmpfs."""
        return self.out_tmpfs_bytes + MiB


@dataclass(frozen=True)
class CopyOutResult:
    """What came out of a workspace. Paths are under `dest_dir`; hashes are sha256 computed on the host."""

    dest_dir: Path
    workspace_dir: Path                    # the working tree (no .git): plain files and directories
    files: int
    dirs: int
    bytes: int                             # working-tree file data kept
    skipped: tuple[Skip, ...]              # first `max_listed_skips`, with reasons
    skipped_counts: Mapping[str, int]      # reason -> how many (symlink, special, too_big, over_total, ...)
    truncated: bool                        # a cap left something out
    bytes_read: int                        # bytes read from the engine
    seconds: float
    head_commit: str | None
    head_ref: str | None                   # e.g. refs/heads/sbx/run-1; None when HEAD is detached
    commits: int                           # reachable from HEAD and every ref
    unreachable_commits: int               # commit objects no ref reaches (amended, reset away)
    train_versions: Mapping[str, str]      # commit sha -> sha256 of its train.py, every commit found
    train_dir: Path                        # <sha256>.py for each distinct version
    committed_train_sha256: str | None     # train.py at HEAD
    worktree_train_sha256: str | None      # train.py in the working tree at the end
    delivered_sha256: str | None           # the scored one: the committed train.py (task rule 5)
    bundle_path: Path | None               # `git bundle` of the repo; None if absent or over its cap
    git_problems: tuple[str, ...]
    delivered: Literal["committed"] = "committed"

    def train_path(self, sha256: str) -> Path:
        return self.train_dir / f"{sha256}.py"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["skipped"] = [asdict(s) for s in self.skipped]
        data["skipped_counts"] = dict(self.skipped_counts)
        data["train_versions"] = dict(self.train_versions)
        for key in ("dest_dir", "workspace_dir", "train_dir", "bundle_path"):
            data[key] = str(data[key]) if data[key] is not None else None
        return data


# --- reading the engine's stream with a cap ------------------------------------------------------------


class CappedStream:
    """A read()-able view of (stdout, stderr) chunks that raises past `cap` bytes or after `deadline`."""

    def __init__(self, chunks: Iterator[Any], cap: int, deadline: float) -> None:
        self._chunks, self.cap, self.deadline = chunks, cap, deadline
        self._buf = bytearray()
        self.bytes_read = 0
        self.stderr = bytearray()
        self._done = False

    def _pull(self) -> bool:
        if self._done:
            return False
        if time.monotonic() > self.deadline:
            raise CopyOutTimeout("copy-out ran past its time limit while streaming")
        try:
            item = next(self._chunks)
        except StopIteration:
            self._done = True
            return False
        out, err = item if isinstance(item, tuple) else (item, None)
        if err and len(self.stderr) < 65536:
            self.stderr += err[:65536]
        if out:
            self.bytes_read += len(out)
            if self.bytes_read > self.cap:
                raise CopyOutError(f"the copier's stream passed its cap of {self.cap} bytes")
            self._buf += out
        return True

    def read(self, n: int = -1) -> bytes:
        while (n < 0 or len(self._buf) < n) and self._pull():
            pass
        n = len(self._buf) if n < 0 else min(n, len(self._buf))
        data = bytes(self._buf[:n])
        del self._buf[:n]
        return data

    def drain(self) -> None:
        while self._pull():
            self._buf.clear()


# --- the copier container ------------------------------------------------------------------------------


def _copier_config(limits: CopyLimits) -> dict[str, Any]:
    return {
        "workspace": "/workspace", "out": "/out/copy.tar", "tmp": "/tmp", "train_file": "train.py",
        "max_entries": limits.max_entries, "max_file_bytes": limits.max_file_bytes,
        "max_total_bytes": limits.max_total_bytes, "max_git_bytes": limits.max_git_bytes,
        "max_commits": limits.max_commits, "max_objects": limits.max_objects,
        "max_listed": limits.max_listed_skips,
        "work_s": limits.timeout_s * 0.7, "hold_s": limits.timeout_s, "go_s": limits.timeout_s,
    }


def _copier_spec(image: str, volume_name: str, limits: CopyLimits, run_id: str, study_id: str) -> ContainerSpec:
    tmpfs_opts = "mode=0700,uid=1000,gid=1000,noexec,nosuid,nodev"
    return ContainerSpec(
        kind="copier", image=image, command=["python3", "-I", "-S", "-c", COPIER_SOURCE,
                                             json.dumps(_copier_config(limits))],
        user="1000:1000", workdir="/", cpus=1, pids=64, memory_bytes=limits.memory_bytes,
        tmpfs={"/out": f"size={limits.out_tmpfs_bytes},{tmpfs_opts}",
               "/tmp": f"size={limits.tmp_tmpfs_bytes},{tmpfs_opts}"},
        mounts=[Mount("/workspace", volume_name, type="volume", read_only=True, no_copy=True)],
        run_id=run_id, study_id=study_id, labels={"sbx.volume": volume_name}, keep_log=True,
        deadline_s=2 * limits.timeout_s + 60,  # the wait for the go, then the copy
    )


def _give_go(box: Box, deadline: float) -> None:
    """SIGHUP: the copier reads the volume from now on. A copier that waited out its own time for the go (the
    same limit) has exited by then and the engine refuses the signal: past the limit, that is the timeout."""
    try:
        box.container.kill(signal="SIGHUP")
    except docker.errors.APIError:
        if time.monotonic() >= deadline:
            raise CopyOutTimeout("the go came past the copy-out time limit; the copier had stopped waiting") from None
        raise


def _wait_for(box: Box, want: bytes, deadline: float) -> None:
    """Follow the copier's log until it says `want` (WAITING, READY) or FAILED: a reader thread takes the
    engine's stream, so the line is seen as it is printed (no polling past it) and the time limit holds
    however the stream behaves (past it the stream is closed under the reader). Past the limit already, it
    is a timeout without a look: whether a line printed by then was read would be a race."""
    if time.monotonic() >= deadline:
        raise CopyOutTimeout(f"the copy-out time limit passed before the copier was asked for {want.decode()}")
    stream = box.container.logs(stdout=True, stderr=True, stream=True, follow=True)
    outcome: list[bytes | BaseException] = []

    def read() -> None:
        tail = b""
        try:
            for chunk in stream:
                tail = (tail + chunk)[-_LOG_TAIL:]
                for line in tail.split(b"\n")[:-1]:
                    if line == want or line.startswith(b"FAILED"):
                        outcome.append(line)
                        return
            outcome.append(b"EXITED " + tail)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            outcome.append(exc)

    reader = threading.Thread(target=read, name="sbx-copier-log", daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    seen = list(outcome)  # before the close: closing makes a blocked reader fail
    _close_stream(stream)
    if not seen:
        raise CopyOutTimeout(f"the copier did not say {want.decode()} within the copy-out time limit")
    line = seen[0]
    if isinstance(line, BaseException):
        raise line
    if line.startswith(_NO_GO):  # the copier's clock for the go, the same limit, ran out first
        raise CopyOutTimeout("the copier had no go within the copy-out time limit")
    if line.startswith(b"FAILED"):
        raise CopyOutError(f"the copier failed: {line[7:][:500].decode('utf-8', 'replace')}")
    if line != want:
        raise CopyOutError(f"the copier exited before it said {want.decode()}: "
                           f"{line[7:][-500:].decode('utf-8', 'replace')}")


class _Routes:
    """Which members of the copier's tar go where, each area against its own caps."""

    def __init__(self, limits: CopyLimits) -> None:
        self.limits = limits
        self.workspace_bytes = self.workspace_entries = self.git_bytes = 0

    def __call__(self, name: str, info: tarfile.TarInfo) -> tuple[str, str] | None:
        if name == "workspace" or name.startswith("workspace/"):
            if self.workspace_entries >= self.limits.max_entries:
                return "over_count", f"more than {self.limits.max_entries} entries"
            if info.isfile():
                if info.size > self.limits.max_file_bytes:
                    return "too_big", f"{info.size} bytes > {self.limits.max_file_bytes}"
                if self.workspace_bytes + info.size > self.limits.max_total_bytes:
                    return "over_total", f"would pass {self.limits.max_total_bytes} bytes"
                self.workspace_bytes += info.size
            self.workspace_entries += 1
            return None
        if name in ("git", "git/train") and info.isdir():
            return None
        if name == "summary.json" and info.isfile():
            return None if info.size <= _SUMMARY_MAX else ("too_big", "summary")
        if (name == "git/repo.bundle" or _TRAIN_MEMBER.match(name)) and info.isfile():
            if self.git_bytes + info.size > self.limits.max_git_bytes:
                return "too_big", f"git data would pass {self.limits.max_git_bytes} bytes"
            self.git_bytes += info.size
            return None
        return "unexpected", "not a member the copier writes"


def _close_stream(chunks: Any) -> None:
    """Shut the exec socket, then release the HTTP response that still holds a reference to it
    (docker-py's CancellableStream.close alone leaves the socket to the garbage collector)."""
    chunks.close()
    response = getattr(chunks, "_response", None)
    if response is not None:
        response.close()


def _stream_copy(client: docker.DockerClient, box: Box, dest: Path, limits: CopyLimits,
                 deadline: float) -> tuple[safetar.Extracted, int]:
    exec_id = client.api.exec_create(box.id, ["cat", "/out/copy.tar"], stdout=True, stderr=True,
                                     user="1000:1000")["Id"]
    chunks = client.api.exec_start(exec_id, stream=True, demux=True)
    stream = CappedStream(iter(chunks), limits.stream_cap, deadline)
    caps = TarCaps(max_entries=limits.max_entries + limits.max_commits + 8,
                   max_file_bytes=max(limits.max_file_bytes, limits.max_git_bytes, _SUMMARY_MAX),
                   max_total_bytes=limits.max_total_bytes + limits.max_git_bytes + _SUMMARY_MAX)
    try:
        extracted = safetar.extract_strictly(stream, dest, caps, _Routes(limits))
        stream.drain()
    except tarfile.TarError as exc:
        raise CopyOutError(f"the copier's tar could not be read: {exc}; {bytes(stream.stderr)[:300]!r}") from None
    finally:
        _close_stream(chunks)
    code = client.api.exec_inspect(exec_id).get("ExitCode")
    if code != 0:
        raise CopyOutError(f"reading the copier's tar failed (exit {code}): {bytes(stream.stderr)[:300]!r}")
    return extracted, stream.bytes_read


# --- the summary, checked ------------------------------------------------------------------------------


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise CopyOutError(f"the copier's summary is malformed: {what}")


def _sha_or_none(value: Any, what: str) -> str | None:
    _need(value is None or (isinstance(value, str) and bool(_HEX40.match(value))), what)
    return value


def _read_summary(path: Path) -> dict[str, Any]:
    _need(path.is_file(), "summary.json missing")
    try:
        data = json.loads(path.read_bytes())
    except ValueError as exc:
        raise CopyOutError(f"the copier's summary is not JSON: {exc}") from None
    _need(isinstance(data, dict) and data.get("version") == 1, "version")
    for key in ("files", "dirs", "bytes"):
        _need(isinstance(data.get(key), int) and data[key] >= 0, key)
    _need(isinstance(data.get("skipped"), list) and isinstance(data.get("skipped_counts"), dict), "skipped")
    git = data.get("git")
    _need(isinstance(git, dict), "git")
    for key in ("commits", "unreachable_commits"):
        _need(isinstance(git.get(key), int) and git[key] >= 0, f"git.{key}")
    _need(isinstance(git.get("train_versions"), dict), "git.train_versions")
    _need(isinstance(git.get("problems"), list), "git.problems")
    return data


def _skips(raw: list[Any]) -> list[Skip]:
    out = []
    for item in raw:
        _need(isinstance(item, dict), "a skipped entry")
        out.append(Skip(str(item.get("path", ""))[:4096], str(item.get("reason", "")), str(item.get("detail", ""))))
    return out


def _prepare_dest(dest: Path) -> bool:
    """Make `dest` (new or empty); True if this call created it."""
    if dest.is_symlink():
        raise CopyOutError(f"{dest}: the destination is a symlink")
    if dest.exists():
        if not dest.is_dir() or any(dest.iterdir()):
            raise CopyOutError(f"{dest}: the destination must be a new or empty directory")
        return False
    dest.mkdir(parents=True)
    return True


def _discard(dest: Path, created: bool) -> None:
    """Remove a failed copy: `dest` itself if this call made it, else everything put in it."""
    if created:
        shutil.rmtree(dest, ignore_errors=True)
        return
    for child in dest.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _check_volume_exists(client: docker.DockerClient, volume_name: str) -> None:
    """Before the copier is created: the engine would make a missing named volume on its mount."""
    try:
        client.volumes.get(volume_name)
    except docker.errors.NotFound:
        raise CopyOutError(f"no volume named {volume_name!r}") from None


def _check_no_writer(client: docker.DockerClient, volume_name: str, copier_id: str) -> None:
    """At the go: no running container but the copier (read-only) mounts the volume."""
    # sparse: no inspect per container, which races with containers removed meanwhile (404)
    listed = client.containers.list(sparse=True, filters={"volume": volume_name})
    running = [(c.attrs.get("Names") or [c.id])[0].lstrip("/") for c in listed
               if c.status == "running" and c.id != copier_id]
    if running:
        raise CopyOutError(f"volume {volume_name!r} is mounted by running container(s) {running}; "
                           "stop or pause them before copying out")


def _start_copier(client: docker.DockerClient, volume_name: str, image: str, limits: CopyLimits, run_id: str,
                  study_id: str) -> Box:
    """The copier, started and WAITING: it has read nothing of the volume yet."""
    _check_volume_exists(client, volume_name)
    box = create_box(client, _copier_spec(image, volume_name, limits, run_id, study_id))
    try:
        box.start()
        _wait_for(box, b"WAITING", time.monotonic() + limits.timeout_s)
    except BaseException:
        box.remove()
        raise
    return box


class CopierAhead:
    """A copier started in a thread while the sandbox is still being stopped (its start is most of a
    copy-out's time); `copy_out_workspace(ahead=...)` gives the go once the volume has no writer."""

    def __init__(self, client: docker.DockerClient, volume_name: str, *, image: str,
                 limits: CopyLimits = CopyLimits(), run_id: str = "", study_id: str = "") -> None:
        self.volume_name, self.limits = volume_name, limits
        self._outcome: list[Box | BaseException] = []
        self._thread = threading.Thread(target=self._start, name="sbx-copier-ahead", daemon=True,
                                        args=(client, volume_name, image, limits, run_id, study_id))
        self._thread.start()

    def _start(self, *args: Any) -> None:
        try:
            self._outcome.append(_start_copier(*args))
        except BaseException as exc:  # noqa: BLE001 - raised where the copy-out takes the copier
            self._outcome.append(exc)

    def take(self) -> Box:
        """The started copier (the caller removes it), or what starting it raised."""
        self._thread.join()
        outcome = self._outcome.pop() if self._outcome else CopyOutError("the copier was taken twice")
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def discard(self) -> None:
        """Remove the copier if nobody took it (the run ended before its copy-out). Idempotent."""
        self._thread.join()
        while self._outcome:
            outcome = self._outcome.pop()
            if isinstance(outcome, Box):
                outcome.remove()


def copy_out_workspace(
    client: docker.DockerClient,
    volume_name: str,
    dest_dir: Path,
    *,
    image: str,
    limits: CopyLimits = CopyLimits(),
    run_id: str = "",
    study_id: str = "",
    ahead: CopierAhead | None = None,
) -> CopyOutResult:
    """Copy the workspace in `volume_name` into `dest_dir` (new or empty), with its git history.

    Stop or pause every container that writes the volume first. Layout of `dest_dir`:
    workspace/ (the working tree, no .git), git/train/<sha256>.py, git/repo.bundle, summary.json (the
    copier's record) and copyout.json (this result). Engine and copier failures raise CopyOutError
    (CopyOutTimeout past `limits.timeout_s`); unsafe content never raises, it is listed in `skipped`.
    `ahead`: a copier started earlier for this volume with the same limits (it is removed either way).
    """
    dest = Path(dest_dir)
    start = time.monotonic()
    created = _prepare_dest(dest)
    box: Box | None = None
    ok = False
    try:
        with timed(log, "copyout.run", volume=volume_name) as extra:
            try:
                box = (ahead.take() if ahead is not None
                       else _start_copier(client, volume_name, image, limits, run_id, study_id))
                _check_no_writer(client, volume_name, box.id)
                # the time limit runs from the go, whether the copier was started ahead or just now, so a
                # run's copy and its control copy of an empty volume are held to the same limit
                deadline = time.monotonic() + limits.timeout_s
                _give_go(box, deadline)
                _wait_for(box, b"READY", deadline)
                extracted, bytes_read = _stream_copy(client, box, dest, limits, deadline)
            except docker.errors.ImageNotFound as exc:
                raise ImageError(f"copier image {image!r} not found: {exc.explanation}") from None
            except docker.errors.APIError as exc:
                raise CopyOutError(f"the engine refused the copy-out: {exc.explanation or exc}") from None
            except requests.exceptions.ConnectionError as exc:
                raise EngineUnavailable(f"the engine went away during the copy-out: {exc}") from None
            except requests.exceptions.Timeout:
                raise CopyOutTimeout("the engine did not answer in time during the copy-out") from None
            except docker.errors.DockerException as exc:
                raise CopyOutError(f"the copy-out failed in the docker client: {exc}") from None
            result = _result(dest, extracted, bytes_read, time.monotonic() - start)
            extra.update(files=result.files, bytes=result.bytes, bytes_read=bytes_read,
                         skipped=sum(result.skipped_counts.values()), truncated=result.truncated)
        (dest / "copyout.json").write_text(json.dumps(result.to_json(), indent=1, sort_keys=True))
        ok = True
        return result
    finally:
        if box is not None:
            box.remove()
        if ahead is not None:
            ahead.discard()
        if not ok:
            _discard(dest, created)


def _result(dest: Path, extracted: safetar.Extracted, bytes_read: int, seconds: float) -> CopyOutResult:
    summary = _read_summary(dest / "summary.json")
    git = summary["git"]
    problems = [str(p)[:500] for p in git["problems"]]
    # train.py versions: trust only files whose content hashes to their name, on the host
    received = {m.group(1) for name, digest in extracted.files.items()
                if (m := _TRAIN_MEMBER.match(name)) and m.group(1) == digest}
    versions: dict[str, str] = {}
    for commit, digest in git["train_versions"].items():
        _need(isinstance(commit, str) and bool(_HEX40.match(commit)), "a train_versions commit")
        if digest in received:
            versions[commit] = digest
        else:
            problems.append(f"train.py of {commit} was not received intact")
    head = _sha_or_none(git.get("head"), "git.head")
    committed = versions.get(head) if head and git.get("head_train_mode") in ("100644", "100755") else None
    if head and committed is None:
        problems.append("HEAD has no regular train.py")
    worktree = extracted.files.get("workspace/train.py")
    skipped = _skips(summary["skipped"]) + list(extracted.skipped)
    counts: dict[str, int] = {str(k): int(v) for k, v in summary["skipped_counts"].items()}
    for reason, n in extracted.skipped_counts.items():
        counts[f"host:{reason}"] = counts.get(f"host:{reason}", 0) + n
    ws_files = [n for n in extracted.files if n.startswith("workspace/")]
    ws_dirs = [n for n in extracted.dirs if n.startswith("workspace/")]
    head_ref = git.get("head_ref")
    bundle = dest / "git" / "repo.bundle"
    return CopyOutResult(
        dest_dir=dest, workspace_dir=dest / "workspace", files=len(ws_files), dirs=len(ws_dirs),
        bytes=sum((dest / n).stat().st_size for n in ws_files),
        skipped=tuple(skipped[:1000]), skipped_counts=counts,
        truncated=bool(summary.get("truncated")) or bool(git.get("truncated")) or extracted.truncated,
        bytes_read=bytes_read, seconds=round(seconds, 3), head_commit=head,
        head_ref=head_ref if isinstance(head_ref, str) else None, commits=git["commits"],
        unreachable_commits=git["unreachable_commits"], train_versions=versions,
        train_dir=dest / "git" / "train", committed_train_sha256=committed, worktree_train_sha256=worktree,
        delivered_sha256=committed, bundle_path=bundle if bundle.is_file() else None,
        git_problems=tuple(problems),
    )


__all__ = ["CopierAhead", "CopyLimits", "CopyOutResult", "Skip", "copy_out_workspace"]
