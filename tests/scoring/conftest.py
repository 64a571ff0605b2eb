"""Fixtures of the scoring tests: a small prepared flight folder and the scorer image."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from flightdata import make_flight_folder


@pytest.fixture(scope="session")
def flight_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_flight_folder(tmp_path_factory.mktemp("flights"))


@pytest.fixture(scope="session")
def scorer_image(docker_client, built_images) -> str:
    return built_images["scorer"].tag
