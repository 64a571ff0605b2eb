"""The one way sbx runs a process inside a running container: `docker exec`, its output streamed to a
capped sink by a reader thread, its state polled, an optional time limit, and one OOM rule.

Used for the agent (its output to a capped log file), for every counted experiment (a tail kept, killed
through its cgroup at the time limit), for the scorer's runner (detached; it writes its own output in
the container) and for the grader's test command (its report read from stdout until the stream closes,
`follow`). Killing is the caller's: a process's cgroup (experiments), or the container.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

import docker
import docker.errors
import requests.exceptions
import urllib3.exceptions

from orchestrator.engine import exec_stream
from orchestrator.failures import InfraError
from orchestrator.sandbox.container import Box, engine_errors

_SDK_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)
#: what reading a stream raises when its container is killed mid-read
_STREAM_ERRORS = (*_SDK_ERRORS, urllib3.exceptions.HTTPError, OSError)
EXIT_SIGKILL = 128 + 9


def oom_verdict(kills_before: int, kills_after: int, exit_code: int | None) -> bool:
    """Was a process that ended with `exit_code` killed by the kernel's OOM killer?

    The one rule: a process that exited 0 was not; otherwise it was when the container's OOM-kill counter
    rose while it ran; when the counter cannot be read (-1), a SIGKILL exit (137) is taken as one, since
    nothing else in sbx's containers sends SIGKILL to a process without recording it."""
    if exit_code == 0:
        return False
    if kills_before >= 0 and kills_after >= 0:
        return kills_after > kills_before
    return exit_code == EXIT_SIGKILL


class OutputSink(Protocol):
    bytes_seen: int

    def write(self, chunk: bytes) -> None: ...
    def close(self) -> None: ...


class CappedFile:
    """Output to a file, kept up to `cap` bytes; the rest is counted and a line says how much was cut."""

    def __init__(self, path: Path, cap: int) -> None:
        self.path, self.cap = path, cap
        self.bytes_seen = 0
        self._file: IO[bytes] = open(path, "wb")  # noqa: SIM115 (closed in close())

    def write(self, chunk: bytes) -> None:
        if self.bytes_seen < self.cap:
            self._file.write(chunk[: self.cap - self.bytes_seen])
            self._file.flush()
        self.bytes_seen += len(chunk)

    def close(self) -> None:
        if self._file.closed:
            return
        if self.bytes_seen > self.cap:
            self._file.write(f"\n[sbx: {self.bytes_seen - self.cap} more bytes of output not kept]\n".encode())
        self._file.close()


class TailBuffer:
    """The last `cap` bytes of the output, and how many bytes there were."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.bytes_seen = 0
        self._buf = bytearray()

    def write(self, chunk: bytes) -> None:
        self.bytes_seen += len(chunk)
        self._buf.extend(chunk)
        del self._buf[: -self.cap]

    def close(self) -> None:
        pass

    def text(self) -> str:
        """The tail as text, with a first line saying how many bytes were cut before it."""
        body = self._buf.decode(errors="replace")
        cut = self.bytes_seen - len(self._buf)
        return f"[{cut} bytes cut]\n{body}" if cut > 0 else body

    def raw(self) -> bytes:
        return bytes(self._buf)


class CappedBuffer:
    """The first `cap` bytes of the output; `over` once more than that arrived (the rest is only counted)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.bytes_seen = 0
        self._buf = bytearray()

    def write(self, chunk: bytes) -> None:
        room = self.cap - len(self._buf)
        if room > 0:
            self._buf += chunk[:room]
        self.bytes_seen += len(chunk)

    def close(self) -> None:
        pass

    @property
    def over(self) -> bool:
        return self.bytes_seen > self.cap

    def raw(self) -> bytes:
        return bytes(self._buf)


@dataclass(frozen=True)
class Exit:
    exit_code: int | None
    timed_out: bool
    oom: bool
    seconds: float


class ContainerProcess:
    """One process run with `docker exec` in `box`. Start it, then poll `state()` or `wait()` for it."""

    def __init__(self, box: Box, cmd: Sequence[str], *, user: str, workdir: str | None = None,
                 env: Mapping[str, str] | None = None, sink: OutputSink | None = None,
                 oom_counter: Callable[[], int] | None = None, stdout_only: bool = False) -> None:
        self.box, self.sink, self.stdout_only = box, sink, stdout_only
        self.api = box.client.api
        self._oom_counter = oom_counter
        self._oom_before = oom_counter() if oom_counter else -1
        with engine_errors(f"starting a process in the {box.spec.kind} container"):
            self.exec_id: str = self.api.exec_create(box.id, list(cmd), user=user, workdir=workdir,
                                                     environment=dict(env or {}))["Id"]
        self._thread: threading.Thread | None = None
        self._seen = 0
        self.started = 0.0
        #: called once the output stream ends (usually: the process exited), from the reader thread
        self.on_output_end: Callable[[], None] | None = None

    def start(self, strict: bool = False) -> None:
        """Start the process: streamed into the sink by a reader thread, or detached when there is no sink.
        With `strict`, an engine that refuses to start it raises InfraError here; otherwise the refusal shows
        as a process that never ran (the experiment service's callers judge that by time)."""
        self.started = time.monotonic()
        action = f"starting a process in the {self.box.spec.kind} container"
        if self.sink is None:
            with engine_errors(action):
                self.api.exec_start(self.exec_id, detach=True)
            return
        chunks: Iterator[bytes] | None = None
        if strict:
            with engine_errors(action):
                chunks = exec_stream(self.box.client, self.exec_id, stdout_only=self.stdout_only)
        self._thread = threading.Thread(target=self._pump, args=(chunks,), name="sbx-exec-output", daemon=True)
        self._thread.start()

    def _pump(self, chunks: Iterator[bytes] | None) -> None:
        assert self.sink is not None
        with contextlib.suppress(*_STREAM_ERRORS):
            if chunks is None:
                chunks = exec_stream(self.box.client, self.exec_id, stdout_only=self.stdout_only)
            for chunk in chunks:
                self.sink.write(chunk)
        if self.on_output_end is not None:
            self.on_output_end()

    def follow(self, limit_s: float, *, grace_s: float, poll_s: float = 0.2) -> tuple[bool, bool]:
        """Wait for the output stream to end; returns (timed_out, held_open).

        The stream ends when every holder of the pipe has closed it, not when the process exits: a child
        the process forked can keep it open and write after the process is gone. So the process is polled
        too: once it has ended, the stream must end within `grace_s`, else `held_open` (what came through
        it is not the process's alone; the caller kills the container). An engine that does not answer a
        poll is waited out: the time limit still holds."""
        assert self._thread is not None, "follow() needs a started process with a sink"
        deadline = self.started + limit_s
        exited_at: float | None = None
        while self._thread.is_alive():
            now = time.monotonic()
            if now >= deadline:
                return True, False
            if exited_at is None:
                try:
                    running = self.state(strict=True)[0]
                except InfraError:
                    running = True
                if not running:
                    exited_at = now
            elif now - exited_at > grace_s:
                return False, True
            self._thread.join(min(poll_s, max(0.0, deadline - now)))
        return False, False

    def new_output(self) -> bool:
        """Whether output arrived since the last call."""
        seen = self.sink.bytes_seen if self.sink is not None else 0
        fresh, self._seen = seen > self._seen, seen
        return fresh

    def pid(self, wait_s: float = 1.0) -> int:
        """The process's host pid (0 when the engine does not know it yet)."""
        end = time.monotonic() + wait_s
        while True:
            try:
                pid = int(self.api.exec_inspect(self.exec_id).get("Pid") or 0)
            except _SDK_ERRORS:
                return 0
            if pid or time.monotonic() >= end:
                return pid
            time.sleep(0.02)

    def state(self, strict: bool = False) -> tuple[bool, int | None]:
        """(running, exit code). A process the engine has not started yet counts as running. When the engine
        does not answer: (False, None), or with `strict` an InfraError (the caller decides what silence means)."""
        try:
            info = self.api.exec_inspect(self.exec_id)
        except _SDK_ERRORS as exc:
            if strict:
                raise InfraError(f"the engine did not say how the process is: {exc}") from None
            return False, None
        running = bool(info.get("Running")) or not info.get("Pid")
        code = info.get("ExitCode")
        return running, None if running or code is None else int(code)

    def wait(self, limit_s: float | None = None, *, on_timeout: Callable[[], None] | None = None,
             poll_s: float = 0.05, grace_s: float = 10.0) -> Exit:
        """Wait for the end; past `limit_s`, call `on_timeout` (which kills) and wait up to `grace_s` more."""
        timed_out = False
        while True:
            running, code = self.state()
            if not running:
                break
            if limit_s is not None and time.monotonic() - self.started > limit_s and not timed_out:
                timed_out = True
                if on_timeout is not None:
                    on_timeout()
                end = time.monotonic() + grace_s
                while self.state()[0] and time.monotonic() < end:
                    time.sleep(poll_s)
                running, code = self.state()
                break
            time.sleep(poll_s)
        return self.finish(code, timed_out)

    def finish(self, exit_code: int | None, timed_out: bool = False) -> Exit:
        """Join the output reader and apply the OOM rule to the ended process."""
        self.join()
        after = self._oom_counter() if self._oom_counter else -1
        oom = not timed_out and oom_verdict(self._oom_before, after, exit_code)
        return Exit(exit_code, timed_out, oom, round(time.monotonic() - self.started, 3))

    def join(self, timeout: float = 5.0) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
        if self.sink is not None:
            self.sink.close()


__all__ = ["EXIT_SIGKILL", "CappedBuffer", "CappedFile", "ContainerProcess", "Exit", "TailBuffer", "oom_verdict"]
