"""The Docker engine, reached through the `docker` SDK. SDK errors become sbx failure types here."""

from __future__ import annotations

import functools

import docker
import docker.errors
import requests.exceptions

from orchestrator.failures import EngineUnavailable


@functools.cache
def client() -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (or the local socket), checked with a ping."""
    try:
        c = docker.from_env(timeout=120)
        c.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise EngineUnavailable(
            f"no Docker engine answers ({exc}); start dockerd or set DOCKER_HOST"
        ) from None
    return c
