"""Leftovers are found by their labels; only those of dead owners are removed unless asked otherwise."""

from __future__ import annotations

import os
import socket
import subprocess
import uuid

import pytest

from orchestrator.sandbox.container import LABEL_OWNER, LABEL_RUN, LABEL_STUDY
from orchestrator.study.reaper import remove_containers

pytestmark = pytest.mark.docker


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_only_dead_owners_leftovers_are_removed(docker_client, built_images, tmp_path) -> None:
    study = f"s-test-{uuid.uuid4().hex[:8]}"
    host = socket.gethostname()
    made = {}
    try:
        for name, owner in (("dead", f"{host}:{_dead_pid()}"), ("alive", f"{host}:{os.getpid()}"),
                            ("remote", f"another-host:{_dead_pid()}")):
            labels = {LABEL_RUN: f"r-{name}-{study}", LABEL_STUDY: study, LABEL_OWNER: owner}
            made[name] = docker_client.containers.create(built_images["scorer"].tag, ["true"], labels=labels,
                                                         network_mode="none")
        removed = remove_containers(docker_client, tmp_path, study_id=study, dead_only=True)
        assert removed == [f"r-dead-{study}"]  # a live owner's run and another host's are not ours to judge
        left = {c.id for c in docker_client.containers.list(all=True, sparse=True, filters={"label": f"{LABEL_STUDY}={study}"})}
        assert left == {made["alive"].id, made["remote"].id}
        assert sorted(remove_containers(docker_client, tmp_path, study_id=study)) == sorted(
            [f"r-alive-{study}", f"r-remote-{study}"])
    finally:
        for c in made.values():
            try:
                c.remove(force=True)
            except Exception:  # already removed by the test
                pass
