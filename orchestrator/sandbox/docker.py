"""The agent's sandbox: one container and one workspace volume per run (and the same container for `sbx smoke`).

Settings (DESIGN.md, "One run"), on top of the hardening every sbx container gets (sandbox/container.py):
user `agent` (uid 1000); `--cpus` and a dedicated cpuset slot; memory equal to memory+swap; a pids limit;
the workspace on its own volume; small tmpfs folders for /tmp and the home folder; labels naming the study
and run. Mounted from the host: only the run's socket folder (read-only) and the agent's one file
(read-only). Never the Docker socket, data or secrets.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors

from orchestrator.failures import ConfigError, InfraError
from orchestrator.log import get_logger
from orchestrator.sandbox.container import Box, ContainerSpec, Mount, create_box, engine_errors
from orchestrator.sandbox.workspace import WORKSPACE
from orchestrator.specs import Budget

log = get_logger(__name__)

SOCK_MOUNT = "/run/sbx"
HOME = "/home/agent"


@dataclass
class SandboxSpec:
    run_id: str
    image: str
    budget: Budget
    cpuset: str | None
    sock_dir: Path | None
    study_id: str = ""
    agent_mount: tuple[Path, str] | None = None   # (host file, path inside), mounted read-only
    extra_labels: dict[str, str] = field(default_factory=dict)


#: seconds a sandbox may outlive its wall clock (besides a tenth of it), for setting up and the final readings
MARGIN_S = 60.0


def margin_s() -> float:
    """`SBX_SANDBOX_MARGIN_S` on the host that starts the sandbox, else 60. A slow or loaded host may need
    more; tests of the deadline itself use less (the margin is the host's setting, never the agent's)."""
    text = os.environ.get("SBX_SANDBOX_MARGIN_S", "").strip()
    if not text:
        return MARGIN_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 24 * 3600:
        raise ConfigError(f"SBX_SANDBOX_MARGIN_S must be a number of seconds in (0, 86400], not {text!r}")
    return value


def deadline_s(budget: Budget) -> float:
    """How long a sandbox may live: its wall clock, plus a margin for setting up, the final readings and a
    loaded machine (`margin_s()` and a tenth of the wall clock). Past it the container ends by itself."""
    wall = budget.wall_clock_minutes * 60
    return wall + margin_s() + 0.1 * wall


def sandbox_container(spec: SandboxSpec, *, volume: str | None, kind: str = "sandbox") -> ContainerSpec:
    """The agent's container. `sbx smoke` builds its container with this same function (kind `smoke`)."""
    b = spec.budget
    mounts = []
    if volume is not None:
        mounts.append(Mount(WORKSPACE, volume, type="volume"))
    if spec.sock_dir is not None:
        mounts.append(Mount(SOCK_MOUNT, str(spec.sock_dir), type="bind", read_only=True))
    if spec.agent_mount is not None:
        host_file, inside = spec.agent_mount
        mounts.append(Mount(inside, str(host_file), type="bind", read_only=True))
    return ContainerSpec(
        kind=kind, image=spec.image, user="agent", workdir=WORKSPACE, cpus=b.cores, cpuset=spec.cpuset,
        memory_bytes=b.memory_mb << 20, pids=b.pids, hostname="sandbox",
        tmpfs={"/tmp": "size=256m,mode=1777", HOME: "size=128m,uid=1000,gid=1000,mode=0700"},
        mounts=mounts, environment={"HOME": HOME, "SBX_RUN_ID": spec.run_id},
        run_id=spec.run_id, study_id=spec.study_id, labels=spec.extra_labels,
        name=f"sbx-{spec.run_id}" if kind == "sandbox" else None, deadline_s=deadline_s(b),
    )


class DockerSandbox:
    """Create, start, pause, stop and remove one run's container and workspace volume."""

    def __init__(self, client: docker.DockerClient, spec: SandboxSpec, kind: str = "sandbox") -> None:
        self.client, self.spec, self.kind = client, spec, kind
        self.volume_name = f"sbx-ws-{spec.run_id}"
        self.box: Box | None = None
        self.volume: Any = None

    def create(self, workspace_tar: bytes) -> None:
        labels = sandbox_container(self.spec, volume=None, kind=self.kind).all_labels()
        with engine_errors("creating the workspace volume"):
            self.volume = self.client.volumes.create(self.volume_name, labels=labels)
        self.box = create_box(self.client, sandbox_container(self.spec, volume=self.volume_name, kind=self.kind))
        self.box.put_archive(WORKSPACE, workspace_tar)

    def start(self, timeout_s: float = 30) -> int:
        """Start the container and return its init process's host pid."""
        assert self.box is not None, "create() first"
        return self.box.start(timeout_s)

    def workspace_host_path(self) -> Path:
        """The workspace volume's folder on the engine's host, which the host reads directly (sandbox/hostfs.py):
        disk use and what an experiment ran are facts the agent cannot hide or stall. Raises InfraError when
        this process cannot open it (a fleet worker needs the engine's volume folder mounted at the same path;
        docs/fleet.md)."""
        with engine_errors("inspecting the workspace volume"):
            mountpoint = self.client.volumes.get(self.volume_name).attrs.get("Mountpoint") or ""
        path = Path(mountpoint)
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_DIRECTORY))
        except OSError as exc:
            raise InfraError(f"the workspace volume's folder {mountpoint or '?'} cannot be opened here "
                             f"({exc.strerror}); sbx reads it from the host") from None
        return path

    def remove(self, keep_volume: bool = False) -> None:
        """Remove the container (and the volume unless kept). Idempotent; never raises."""
        if self.box is not None:
            self.box.remove()
        if self.volume is not None and not keep_volume:
            self.remove_volume()

    def remove_volume(self) -> None:
        for _ in range(20):
            try:
                self.client.volumes.get(self.volume_name).remove(force=True)
                return
            except docker.errors.NotFound:
                return
            except docker.errors.APIError:
                time.sleep(0.2)  # still in use by a container being removed
        log.warning("sandbox.volume_remove_failed", volume=self.volume_name)
