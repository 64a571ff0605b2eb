"""Leftovers of runs nobody owns: containers, volumes, per-run socket folders, metering cgroups.

A restarted driver owns nothing yet, so everything labelled with its study is a leftover of the process
that died; `sbx gc` removes leftovers of every study (or of dead owners only, with --dead-only)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from collections.abc import Collection
from pathlib import Path

import docker
import docker.errors

from orchestrator.ledger import Ledger, RunState
from orchestrator.log import get_logger
from orchestrator.sandbox.container import LABEL_OWNER, LABEL_RUN, LABEL_STUDY

log = get_logger(__name__)

IN_FLIGHT = (RunState.STARTING, RunState.RUNNING)


def _owner_alive(owner: str, dead_hosts: frozenset[str] = frozenset()) -> bool:
    """Whether the process named by an owner label (`host:pid`) may still be working. A host in
    `dead_hosts` (a fleet node known to be gone) owns nothing any more; another host's process is not
    ours to judge; on this host the pid says."""
    host, _, pid = owner.partition(":")
    if host in dead_hosts:
        return False
    if host != socket.gethostname() or not pid.isdigit():
        return True  # another machine's process: not ours to judge
    try:
        os.kill(int(pid), 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def remove_containers(client: docker.DockerClient, mount_parent: Path, *, study_id: str | None = None,
                      dead_only: bool = False, dead_hosts: frozenset[str] = frozenset(),
                      run_ids: Collection[str] = ()) -> list[str]:
    """Remove sbx containers (sandboxes, copiers, scorers) and workspace volumes; returns the run ids hit.

    `study_id` limits this to the study's (scorers carry only a run label: give the study's `run_ids` too);
    with `dead_only`, only those whose owner is gone (see `_owner_alive`). A removed container's metering
    cgroups go with it (its owner died before it could remove them)."""
    wanted = set(run_ids)

    def mine(labels: dict[str, str]) -> bool:
        if study_id is not None and labels.get(LABEL_STUDY) != study_id and labels.get(LABEL_RUN) not in wanted:
            return False
        return not (dead_only and _owner_alive(labels.get(LABEL_OWNER, ""), dead_hosts))

    runs: list[str] = []
    # sparse: no inspect per container, which races with containers removed meanwhile (404)
    for c in client.containers.list(all=True, sparse=True, filters={"label": LABEL_RUN}):
        if not mine(c.attrs.get("Labels") or {}):
            continue
        runs.append((c.attrs.get("Labels") or {}).get(LABEL_RUN, ""))
        with contextlib.suppress(docker.errors.APIError):
            c.remove(force=True)
        for cgroup in container_cgroups(c.id):
            remove_cgroup_tree(cgroup)
        log.info("reap.container", container=c.id[:12], run_id=(c.attrs.get("Labels") or {}).get(LABEL_RUN))
    for v in client.volumes.list(filters={"label": LABEL_RUN}):
        if not mine(v.attrs.get("Labels") or {}):
            continue
        with contextlib.suppress(docker.errors.APIError):
            v.remove(force=True)
            log.info("reap.volume", volume=v.name)
    for run_id in {r for r in runs if r}:
        remove_socket_dirs(mount_parent, run_id)
    return sorted({r for r in runs if r})


def remove_socket_dirs(mount_parent: Path, run_id: str | None = None) -> int:
    """Per-run socket folders under a Home's mount parent (sbx-<last 8 of run id>-*); all of them when
    run_id is None."""
    n = 0
    pattern = f"sbx-{run_id[-8:]}-*" if run_id else "sbx-*-*"
    for d in mount_parent.glob(pattern):
        if d.is_dir() and (d / "gate.sock").exists():  # a run's socket folder, nothing else named alike
            shutil.rmtree(d, ignore_errors=True)
            n += 1
    return n


def orphan_cgroups(client: docker.DockerClient) -> list[Path]:
    """Metering cgroups (`py`, `agent`, in any hierarchy) under container cgroups whose container no longer exists."""
    live = {c.id for c in client.containers.list(all=True, sparse=True)}
    return [p for p in container_cgroups("*") if p.parent.name not in live]


def container_cgroups(container_id: str) -> list[Path]:
    """The metering cgroups (`py` and `agent`, in any hierarchy) under one container's cgroup (a glob for
    all: "*")."""
    root = Path("/sys/fs/cgroup")
    return [p for name in ("py", "agent")
            for p in (*root.glob(f"*/docker/{container_id}/{name}"), *root.glob(f"docker/{container_id}/{name}"))]


def remove_cgroup_tree(path: Path) -> None:
    """rmdir a leftover cgroup and its children, deepest first (they hold no process: the container is gone)."""
    for sub in sorted((p for p in path.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            sub.rmdir()
    with contextlib.suppress(OSError):
        path.rmdir()
    with contextlib.suppress(OSError):
        path.parent.rmdir()  # the dead container's own cgroup, kept alive only by our child


def fail_in_flight(ledger: Ledger, study_id: str, reason: str) -> list[str]:
    """Attempts left `starting`/`running` by a dead driver become `failed/infra` (counted = false)."""
    failed = []
    for run in ledger.list_runs(study_id=study_id):
        if run.status in IN_FLIGHT:
            ledger.advance(run.run_id, RunState.FAILED, failure_class="infra", reason=reason)
            failed.append(run.run_id)
    return failed
