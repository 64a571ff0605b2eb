"""The Docker engine, reached through the `docker` SDK. SDK errors become sbx failure types here."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Generator
from typing import Any

import docker
import docker.errors
import requests.exceptions

from orchestrator.failures import EngineUnavailable


@functools.cache
def client() -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (or the local socket), checked with a ping; one per
    process."""
    return fresh_client()


def fresh_client() -> docker.DockerClient:
    """A client of its own (a worker thread's, closed by its caller), checked with a ping like `client()`."""
    try:
        c = docker.from_env(timeout=120)
        c.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise EngineUnavailable(
            f"no Docker engine answers ({exc}); start dockerd or set DOCKER_HOST"
        ) from None
    return c



def exec_stream(client: docker.DockerClient, exec_id: str, *, stdout_only: bool = False
                ) -> Generator[bytes, None, None]:
    """Start an exec now (an engine error raises here, not at the first read) and return its output as it
    comes: stdout and stderr as the engine sends them, or with `stdout_only` stdout alone (stderr dropped).
    The connection is closed however the stream ends.

    docker-py's CancellableStream.close() does nothing once the stream has run to its end (the response
    reports closed), which leaves the hijacked socket open until garbage collection (measured: one
    ResourceWarning per experiment): the socket is marked closed but its file object (the makefile()
    reader http.client reads through) still holds the descriptor. We close both ourselves.
    """
    stream = client.api.exec_start(exec_id, stream=True, demux=stdout_only)
    return _drain(stream, stdout_only)


def _drain(stream: Any, stdout_only: bool) -> Generator[bytes, None, None]:  # a generator: callers close it
    try:
        reader = stream._response.raw._fp.fp
        sock = reader.raw._sock
    except AttributeError:  # another transport (ssh, npipe): rely on the SDK
        reader = sock = None
    try:
        if stdout_only:
            for out, _err in stream:
                if out:
                    yield out
        else:
            yield from stream
    finally:
        stream.close()
        for obj in (reader, sock):
            if obj is not None:
                with contextlib.suppress(OSError, ValueError):
                    obj.close()
