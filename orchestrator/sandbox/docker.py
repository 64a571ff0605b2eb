"""The sandbox container of one run, through the Docker SDK. SDK errors become InfraError here.

Settings (DESIGN.md, "One run"): non-root `agent` user; all capabilities dropped; no-new-privileges; a
pids limit; memory equal to memory+swap; `--cpus` and a dedicated cpuset slot; `--init`; no network;
the workspace on its own volume; a read-only root filesystem with small tmpfs for /tmp and the home
folder; labels naming the study and run. Mounted from the host: only the run's socket folder (read-only)
and the agent's one file (read-only). Never the Docker socket, data or secrets.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.types import Mount

from orchestrator.failures import InfraError, SandboxStartTimeout
from orchestrator.log import get_logger
from orchestrator.sandbox.workspace import WORKSPACE
from orchestrator.specs import Budget

log = get_logger(__name__)

SOCK_MOUNT = "/run/sbx"
LABEL_KIND = "sbx.kind"
LABEL_RUN = "sbx.run"
LABEL_STUDY = "sbx.study"
LABEL_OWNER = "sbx.owner"

_SDK_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)


@contextlib.contextmanager
def engine_errors(action: str) -> Iterator[None]:
    """Translate Docker SDK failures into InfraError (retryable, not the agent's fault)."""
    try:
        yield
    except docker.errors.ImageNotFound as exc:
        raise InfraError(f"{action}: image not found ({exc.explanation}); run `sbx images build`") from None
    except _SDK_ERRORS as exc:
        detail = getattr(exc, "explanation", None) or str(exc)
        raise InfraError(f"{action}: {detail}") from None


def owner_label() -> str:
    """Who owns a container: host and pid of the orchestrator process (for reaping after a crash)."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class SandboxSpec:
    run_id: str
    image: str
    budget: Budget
    cpuset: str
    sock_dir: Path
    study_id: str = ""
    agent_mount: tuple[Path, str] | None = None   # (host file, path inside), mounted read-only
    extra_labels: dict[str, str] = field(default_factory=dict)


class DockerSandbox:
    """Create, start, pause, stop and remove one run's container and workspace volume."""

    def __init__(self, client: docker.DockerClient, spec: SandboxSpec) -> None:
        self.client, self.spec = client, spec
        self.name = f"sbx-{spec.run_id}"
        self.volume_name = f"sbx-ws-{spec.run_id}"
        self.container: Any = None
        self.volume: Any = None

    @property
    def labels(self) -> dict[str, str]:
        return {LABEL_KIND: "sandbox", LABEL_RUN: self.spec.run_id, LABEL_STUDY: self.spec.study_id,
                LABEL_OWNER: owner_label(), **self.spec.extra_labels}

    def create(self, workspace_tar: bytes) -> None:
        b = self.spec.budget
        mounts = [
            Mount(WORKSPACE, self.volume_name, type="volume"),
            Mount(SOCK_MOUNT, str(self.spec.sock_dir), type="bind", read_only=True),
        ]
        if self.spec.agent_mount is not None:
            host_file, inside = self.spec.agent_mount
            mounts.append(Mount(inside, str(host_file), type="bind", read_only=True))
        with engine_errors("creating the workspace volume"):
            self.volume = self.client.volumes.create(self.volume_name, labels=self.labels)
        with engine_errors("creating the sandbox container"):
            self.container = self.client.containers.create(
                self.spec.image, ["sleep", "infinity"], name=self.name, user="agent", working_dir=WORKSPACE,
                network_mode="none", init=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
                pids_limit=b.pids, mem_limit=f"{b.memory_mb}m", memswap_limit=f"{b.memory_mb}m",
                nano_cpus=b.cores * 1_000_000_000, cpuset_cpus=self.spec.cpuset,
                read_only=True, tmpfs={"/tmp": "size=256m,mode=1777", "/home/agent": "size=128m,uid=1000,gid=1000,mode=0700"},
                mounts=mounts, labels=self.labels, hostname="sandbox",
                environment={"HOME": "/home/agent", "SBX_RUN_ID": self.spec.run_id},
            )
        with engine_errors("copying the workspace in"):
            if not self.container.put_archive(WORKSPACE, workspace_tar):
                raise InfraError("copying the workspace into the sandbox failed")

    def start(self, timeout_s: float = 30) -> int:
        """Start the container and return its init process's host pid."""
        with engine_errors("starting the sandbox"):
            self.container.start()
            end = time.monotonic() + timeout_s
            while time.monotonic() < end:
                self.container.reload()
                if self.container.status == "running" and self.container.attrs["State"]["Pid"]:
                    return int(self.container.attrs["State"]["Pid"])
                if self.container.status in ("exited", "dead"):
                    raise InfraError(f"the sandbox exited at start: {self.container.logs()[-500:]!r}")
                time.sleep(0.05)
        raise SandboxStartTimeout(f"the sandbox did not start within {timeout_s:g}s")

    def granted(self) -> dict[str, Any]:
        """The resources the engine actually granted, read back from the container."""
        with engine_errors("inspecting the sandbox"):
            self.container.reload()
        hc = self.container.attrs["HostConfig"]
        return {
            "cpuset": hc.get("CpusetCpus"), "cpus": (hc.get("NanoCpus") or 0) / 1e9,
            "memory_mb": (hc.get("Memory") or 0) // (1 << 20), "memory_swap_mb": (hc.get("MemorySwap") or 0) // (1 << 20),
            "pids": hc.get("PidsLimit"), "network": hc.get("NetworkMode"), "cap_drop": hc.get("CapDrop"),
            "security_opt": hc.get("SecurityOpt"), "read_only_rootfs": hc.get("ReadonlyRootfs"), "init": hc.get("Init"),
        }

    def image_digest(self) -> str:
        return str(self.container.attrs.get("Image", ""))

    def is_running(self) -> bool:
        try:
            self.container.reload()
            return self.container.status == "running"
        except docker.errors.NotFound:
            return False

    def pause(self) -> bool:
        try:
            self.container.pause()
            return True
        except docker.errors.APIError:
            return False  # not running (hard stop killed it): nothing to freeze

    def unpause(self) -> None:
        with contextlib.suppress(docker.errors.APIError):
            self.container.unpause()

    def kill(self) -> None:
        with contextlib.suppress(docker.errors.APIError):
            self.container.kill()

    def workspace_kb(self) -> int | None:
        """Disk used by the workspace (du as the agent user inside the container)."""
        try:
            res = self.container.exec_run(["du", "-sxk", WORKSPACE], user="agent")
        except docker.errors.APIError:
            return None
        try:
            return int(res.output.split()[0])
        except (ValueError, IndexError):
            return None

    def remove(self, keep_volume: bool = False) -> None:
        """Remove the container (and the volume unless kept). Idempotent; never raises."""
        if self.container is not None:
            with contextlib.suppress(docker.errors.APIError):
                self.container.remove(force=True)
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
