"""The grader container: one fresh container per grading, the test command exec'd in it, its report
streamed out with a byte cap. The container comes from the shared builder (`create_box`) and the test
command runs through the shared exec helper (`ContainerProcess`, in its `follow` mode).

Settings: the task's image; uid 1000; every capability dropped; no-new-privileges; no network; read-only
root; tmpfs /tmp; CPU, memory (= memory+swap), pids limits; no core dumps; the log driver off; an
environment spelled out here. The grading tree goes into a fresh volume (created with no_copy, so nothing
of the image shows through) by put_archive before the start, files owned by uid 1000; nothing is
bind-mounted from the host.

The report never travels through a file the tests could rewrite later: the test command's fd 3 is the exec's
stdout pipe, pytest writes its JUnit XML to /dev/fd/3, and everything the tests print goes to a file in
/tmp. The stream ends only when every holder of the pipe has closed it, so a child the tests forked could
keep it open after pytest exits (measured here) and write a report of its own: the shell that ran pytest
therefore kills every process started after it the moment pytest ends, and the host also
watches the exec (`ContainerProcess.follow`): a stream still open REPORT_GRACE_S after the test command ended makes the report
untrusted (`report_held_open`, a fail) and the container is killed. Whatever such a child writes before pytest exits
lands beside the real report and makes it malformed. The container and everything in it is removed
right after. A script grader (Harbor) closes fd 3 for the script; the reward file is read after the script
ends (a same-uid process can still rewrite that file before: Harbor's own design has the same limit).
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import tarfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.failures import InfraError
from orchestrator.log import get_logger
from orchestrator.sandbox.container import Box, ContainerSpec, Mount, create_box
from orchestrator.sandbox.process import CappedBuffer, ContainerProcess
from orchestrator.specs.task import Limits
from orchestrator.tasks.verdict import RunFacts

log = get_logger(__name__)

UID = 1000
CONSOLE = "/tmp/.sbx-console"
_TAIL = 4000


@dataclass(frozen=True)
class GraderRun:
    """One test command in one fresh container."""

    image: str
    command: tuple[str, ...]                 # argv, run in `workdir`
    tree: Path                               # host folder copied to `workdir`
    workdir: str = "/workspace"
    extra_trees: tuple[tuple[Path, str], ...] = ()   # (host folder, absolute path): e.g. Harbor's /tests
    env: dict[str, str] = field(default_factory=dict)
    limits: Limits = Limits()
    timeout_s: float = 600
    mode: str = "junit"                      # junit: report on fd 3 | reward: read `reward_file` afterwards
    reward_file: str = "/logs/verifier/reward.txt"
    cpuset: str | None = None
    run_label: str = "adhoc"


def tar_of(folder: Path) -> bytes:
    """A tar of folder's regular files and folders, every entry owned by uid/gid 1000, modes reduced."""
    buf = io.BytesIO()

    def own(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if not (info.isfile() or info.isdir()):
            return None
        info.uid = info.gid = UID
        info.uname = info.gname = "agent"
        info.mode = 0o755 if info.isdir() or info.mode & 0o111 else 0o644
        return info

    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(folder, arcname=".", filter=own)
    return buf.getvalue()


def _environment(run: GraderRun) -> dict[str, str]:
    threads = str(max(1, int(run.limits.cpus)))
    return {"PATH": "/opt/sbx/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
            "MKL_NUM_THREADS": threads, **run.env}


#: sh: SIGKILL every process that started after this shell (by /proc/PID/stat's start time, field 22, read
#: after the last ") " so a process name cannot shift the fields), a few passes for children forked meanwhile
_KILL_YOUNGER = (
    'read -r st < /proc/$$/stat; st=${st##*) }; set -- $st; t0=${20}; '
    'for _ in 1 2 3; do for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = "$$" ] && continue; '
    'read -r st < "$d/stat" 2>/dev/null || continue; st=${st##*) }; set -- $st; '
    '[ "${20}" -ge "$t0" ] && kill -KILL "$p" 2>/dev/null; done; done'
)


def _script(run: GraderRun) -> list[str]:
    cap = run.limits.report_max_bytes + 1
    if run.mode == "junit":
        # not exec'd: when pytest ends, the shell kills every process started after itself (the tests and
        # whatever they left; the container's own processes are older), so none can write to the report pipe
        body = (f'exec 3>&1 >{CONSOLE} 2>&1 </dev/null; "$@" --junitxml=/dev/fd/3; rc=$?; {_KILL_YOUNGER}; '
                'exit $rc')
    else:
        reward_dir = os.path.dirname(run.reward_file)
        body = (f'exec 3>&1 >{CONSOLE} 2>&1 </dev/null; mkdir -p {reward_dir}; "$@" 3>&-; s=$?; '
                f'head -c {cap} {run.reward_file} >&3 2>/dev/null; exit $s')
    return ["sh", "-c", body, "sbx-grade", *run.command]


def run_in_grader(client: Any, run: GraderRun) -> RunFacts:
    """Create, fill, start and exec one grader; return what it observed. Docker failures raise InfraError."""
    import docker.errors

    name = f"sbx-grade-{re.sub(r'[^a-zA-Z0-9_.-]', '-', run.run_label)[:40]}-{uuid.uuid4().hex[:8]}"
    trees = [(run.tree, run.workdir), *run.extra_trees]
    volumes: list[Any] = []
    box: Box | None = None
    start = time.monotonic()
    try:
        lim = run.limits
        spec = ContainerSpec(
            kind="grader", image=run.image, user=str(UID), workdir=run.workdir, cpus=lim.cpus, cpuset=run.cpuset,
            memory_bytes=lim.memory_mb << 20, pids=lim.pids,
            tmpfs={"/tmp": f"size={lim.tmp_mb}m,mode=1777", "/logs": f"size=16m,uid={UID},gid={UID},mode=0755"},
            environment=_environment(run), run_id=run.run_label, name=name, hostname="grader", entrypoint=[],
            deadline_s=run.timeout_s + 300,  # ends by itself even if sbx is killed: the tests plus copy-in and out
        )
        try:
            mounts = []
            for i, (_, inside) in enumerate(trees):
                vol = client.volumes.create(f"{name}-{i}", labels=spec.all_labels())
                volumes.append(vol)
                mounts.append(Mount(inside, vol.name, type="volume", no_copy=True))
            box = create_box(client, dataclasses.replace(spec, mounts=mounts))
            for folder, inside in trees:
                box.put_archive(inside, tar_of(folder))
            box.start()
            ooms_before = box.oom_kills()
        except (docker.errors.DockerException, OSError) as exc:
            raise InfraError(f"starting the grader: {getattr(exc, 'explanation', None) or exc}") from None
        report = CappedBuffer(run.limits.report_max_bytes)
        proc = ContainerProcess(box, _script(run), user=str(UID), workdir=run.workdir, env=_environment(run),
                                sink=report, stdout_only=True)
        proc.start(strict=True)
        timed_out, held_open = proc.follow(run.timeout_s, grace_s=REPORT_GRACE_S)
        if timed_out or held_open or report.over:
            box.kill()
        proc.join(30)
        seconds = time.monotonic() - proc.started
        exit_code = None if timed_out else proc.state()[1]
        # the grader's own OOM rule: any OOM kill while the tests ran fails the grading, whatever pytest's
        # exit code (a test's subprocess killed for memory can leave pytest exiting 0 or 1 alike)
        oom = False
        if ooms_before >= 0:
            after = box.oom_kills()
            oom = after > ooms_before if after >= 0 else False
        tail = "" if (timed_out or report.over) else _console_tail(box.container)
        out = report.raw()
        log.info("grader.ran", name=name, seconds=round(seconds, 2), exit_code=exit_code, timed_out=timed_out,
                 report_bytes=len(out), oom=oom, setup_s=round(proc.started - start, 2))
        return RunFacts(exit_code=exit_code, timed_out=timed_out, oom=oom,
                        report=out or None, report_truncated=report.over,
                        report_held_open=held_open, output_tail=tail, seconds=round(seconds, 3))
    finally:
        if box is not None:
            box.remove()
        for vol in volumes:
            _remove_volume(client, vol.name)


#: how long the report stream may stay open after the test command has exited (pytest's own buffered
#: writes arrive well within it; only a process the tests left behind holds the pipe longer)
REPORT_GRACE_S = 1.0


def _console_tail(container: Any) -> str:
    try:
        res = container.exec_run(["tail", "-c", str(_TAIL), CONSOLE], user=str(UID), demux=False)
    except Exception:  # noqa: BLE001 - diagnostics only
        return ""
    return (res.output or b"")[: _TAIL + 64].decode(errors="replace")


def _remove_volume(client: Any, name: str) -> None:
    import docker.errors

    for _ in range(20):
        try:
            client.volumes.get(name).remove(force=True)
            return
        except docker.errors.NotFound:
            return
        except docker.errors.APIError:
            time.sleep(0.2)
    log.warning("grader.volume_remove_failed", volume=name)
