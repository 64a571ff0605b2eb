"""The one place sbx makes containers: every container it starts gets its hardening from `create_box`.

Hardening that holds for every container (agent sandbox, smoke check, experiment host, scorer, copier,
grader): no network; all capabilities dropped; no-new-privileges; a read-only root filesystem; a non-root
user; `--init`; memory equal to memory+swap; a pids limit; a CPU limit; no core dumps; the container's
own log stream off (a flood of output never reaches the host's disk through the engine's log driver)
unless a kind reads its log, and then capped at 1 MiB; and labels naming its kind, run, study and the
process that owns it (for reaping after a crash). A call site states only what differs: image, command,
user, limits, tmpfs folders, mounts and environment.

Every container carries its own deadline, enforced without the process that started it: a container
kept alive for `docker exec` runs `sleep <deadline_s>` as its main process, as root (with no
capabilities), so the agent's uid can neither stop nor signal it (measured: a uid-1000 `sleep` is stopped
with SIGSTOP and never ends); when it ends, the container ends, whatever became of sbx. A kind with a
command of its own runs it under `timeout -s KILL <deadline_s>`. Every exec names its user (`user`).

Docker SDK errors become sbx failure types at this boundary (`engine_errors`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import docker
import docker.errors
import requests.exceptions
from docker.types import LogConfig, Mount, Ulimit

from orchestrator.failures import EngineUnavailable, ImageError, InfraError, SandboxStartTimeout
from orchestrator.log import get_logger
from orchestrator.sandbox.cgroups import CgroupLayout, CgroupNode, oom_kills

log = get_logger(__name__)

LABEL_KIND = "sbx.kind"
LABEL_RUN = "sbx.run"
LABEL_STUDY = "sbx.study"
LABEL_OWNER = "sbx.owner"
LABEL_DEADLINE = "sbx.deadline_s"

_SDK_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)


@contextlib.contextmanager
def engine_errors(action: str) -> Iterator[None]:
    """Translate Docker SDK failures into sbx's infrastructure errors (retryable, never the agent's fault)."""
    try:
        yield
    except docker.errors.ImageNotFound as exc:
        raise ImageError(f"{action}: image not found ({exc.explanation}); run `sbx images build`") from None
    except requests.exceptions.ConnectionError as exc:
        raise EngineUnavailable(f"{action}: the Docker engine went away ({exc})") from None
    except _SDK_ERRORS as exc:
        detail = getattr(exc, "explanation", None) or str(exc)
        raise InfraError(f"{action}: {detail}") from None


def owner_label() -> str:
    """Who owns a container: host and pid of the orchestrator process (for reaping after a crash)."""
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class ContainerSpec:
    """One container. Everything not named here is hardened the same way for every kind (module docstring)."""

    kind: str                                  # sandbox | smoke | scorer | copier | grader | ...
    image: str
    #: the container's own command (run as `user`); None: kept alive for `docker exec` until the deadline
    command: Sequence[str] | None = None
    user: str = "agent"
    #: seconds the container may live from its start, however the process that started it ends
    deadline_s: float = 6 * 3600
    workdir: str | None = None
    cpus: float = 1.0
    cpuset: str | None = None
    memory_bytes: int = 1 << 30
    pids: int = 256
    tmpfs: Mapping[str, str] = field(default_factory=lambda: {"/tmp": "size=256m,mode=1777"})
    mounts: Sequence[Mount] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    run_id: str = ""
    study_id: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    name: str | None = None
    hostname: str | None = None
    #: the kinds that read their own log (the copier reports READY on it) keep a 1 MiB json-file log
    keep_log: bool = False
    #: replaces the image's ENTRYPOINT (task images from elsewhere may set one); None keeps it
    entrypoint: Sequence[str] | None = None

    def all_labels(self) -> dict[str, str]:
        return {LABEL_KIND: self.kind, LABEL_RUN: self.run_id, LABEL_STUDY: self.study_id,
                LABEL_OWNER: owner_label(), LABEL_DEADLINE: str(int(self.deadline_s)), **self.labels}

    def main_process(self) -> tuple[list[str], str]:
        """(command, user) of the container's main process, which bounds the container's life."""
        seconds = str(max(1, int(self.deadline_s)))
        if self.command is None:
            return ["sleep", seconds], "0:0"  # root, no capabilities: no process of the agent may stop it
        return ["timeout", "-s", "KILL", seconds, *self.command], self.user

    def container_name(self) -> str:
        return self.name or f"sbx-{self.kind}-{uuid.uuid4().hex[:10]}"

    def create_kwargs(self) -> dict[str, Any]:
        """The engine's create arguments: the hardening every sbx container shares, plus this spec."""
        log_config = (LogConfig(type="json-file", config={"max-size": "1m", "max-file": "1"}) if self.keep_log
                      else LogConfig(type=LogConfig.types.NONE))
        command, user = self.main_process()
        return dict(
            image=self.image, command=command, name=self.container_name(), user=user,
            working_dir=self.workdir, hostname=self.hostname or self.kind,
            network_mode="none", init=True, cap_drop=["ALL"], security_opt=["no-new-privileges"],
            read_only=True, ulimits=[Ulimit(name="core", soft=0, hard=0)], log_config=log_config,
            pids_limit=self.pids, mem_limit=self.memory_bytes, memswap_limit=self.memory_bytes,
            nano_cpus=int(self.cpus * 1e9), cpuset_cpus=self.cpuset,
            tmpfs=dict(self.tmpfs), mounts=list(self.mounts), environment=dict(self.environment),
            labels=self.all_labels(),
            **({"entrypoint": list(self.entrypoint)} if self.entrypoint is not None else {}),
        )


class Box:
    """A container made by `create_box`: start, inspect, pause, kill and remove it, and reach its cgroup."""

    def __init__(self, client: docker.DockerClient, spec: ContainerSpec, container: Any) -> None:
        self.client, self.spec, self.container = client, spec, container
        self.pid = 0

    @property
    def id(self) -> str:
        return str(self.container.id)

    @property
    def name(self) -> str:
        return str(self.container.name)

    def start(self, timeout_s: float = 30) -> int:
        """Start the container and return its init process's host pid."""
        with engine_errors(f"starting the {self.spec.kind} container"):
            self.container.start()
            end = time.monotonic() + timeout_s
            while time.monotonic() < end:
                self.container.reload()
                state = self.container.attrs["State"]
                if self.container.status == "running" and state.get("Pid"):
                    self.pid = int(state["Pid"])
                    return self.pid
                if self.container.status in ("exited", "dead"):
                    raise InfraError(f"the {self.spec.kind} container exited at start (exit {state.get('ExitCode')})")
                time.sleep(0.02)
        raise SandboxStartTimeout(f"the {self.spec.kind} container did not start within {timeout_s:g}s")

    def cgroup(self, layout: CgroupLayout | None = None) -> CgroupNode:
        """The container's cgroup on the host (the container must be running)."""
        return (layout or CgroupLayout.detect()).node_of_pid(self.pid)

    def oom_kills(self) -> int:
        """How many processes the kernel's OOM killer has killed in the container (-1 when unknown)."""
        return oom_kills(CgroupLayout.detect(), self.pid) if self.pid else -1

    def put_archive(self, path: str, tar: bytes) -> None:
        with engine_errors(f"copying files into the {self.spec.kind} container"):
            if not self.container.put_archive(path, tar):
                raise InfraError(f"copying files into the {self.spec.kind} container failed")

    def attrs(self) -> dict[str, Any]:
        with engine_errors(f"inspecting the {self.spec.kind} container"):
            self.container.reload()
        return dict(self.container.attrs)

    def granted(self) -> dict[str, Any]:
        """The resources the engine actually granted, read back from the container."""
        hc = self.attrs()["HostConfig"]
        return {
            "cpuset": hc.get("CpusetCpus"), "cpus": (hc.get("NanoCpus") or 0) / 1e9,
            "memory_mb": (hc.get("Memory") or 0) // (1 << 20), "memory_swap_mb": (hc.get("MemorySwap") or 0) // (1 << 20),
            "pids": hc.get("PidsLimit"), "network": hc.get("NetworkMode"), "cap_drop": hc.get("CapDrop"),
            "security_opt": hc.get("SecurityOpt"), "read_only_rootfs": hc.get("ReadonlyRootfs"), "init": hc.get("Init"),
            "log_driver": (hc.get("LogConfig") or {}).get("Type"),
        }

    def image_id(self) -> str:
        return str(self.container.attrs.get("Image", ""))

    def is_running(self) -> bool:
        try:
            self.container.reload()
            return self.container.status == "running"
        except docker.errors.NotFound:
            return False
        except _SDK_ERRORS:
            return False

    def pause(self) -> bool:
        """Freeze every process; False when there is nothing running to freeze."""
        try:
            self.container.pause()
            return True
        except _SDK_ERRORS:
            return False

    def unpause(self) -> None:
        with contextlib.suppress(*_SDK_ERRORS):
            self.container.unpause()

    def kill(self) -> None:
        with contextlib.suppress(*_SDK_ERRORS):
            self.container.kill()

    def logs(self) -> str:
        with engine_errors(f"reading the {self.spec.kind} container's log"):
            return self.container.logs(stdout=True, stderr=True).decode("utf-8", "replace")

    def status(self) -> str:
        with engine_errors(f"inspecting the {self.spec.kind} container"):
            self.container.reload()
        return str(self.container.status)

    def remove(self) -> None:
        """Remove the container (killing it first). Idempotent; never raises."""
        for _ in range(3):
            try:
                self.container.remove(force=True)
                return
            except docker.errors.NotFound:
                return
            except _SDK_ERRORS as exc:
                log.warning("container.remove_retry", container=self.spec.kind, error=str(exc))
                time.sleep(0.5)


def create_box(client: docker.DockerClient, spec: ContainerSpec) -> Box:
    """Create (not start) the container `spec` describes, hardened like every other sbx container."""
    with engine_errors(f"creating the {spec.kind} container"):
        container = client.containers.create(**spec.create_kwargs())
    return Box(client, spec, container)


__all__ = ["LABEL_DEADLINE", "LABEL_KIND", "LABEL_OWNER", "LABEL_RUN", "LABEL_STUDY", "Box", "ContainerSpec", "Mount",
           "create_box", "engine_errors", "owner_label"]
