from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.model import Scenario, StandIn, serve_in_thread

SCENARIO = {
    "name": "flight-delays",
    "title": "Tune the flight-delay model",
    "steps": [
        {"shell": "./run_experiment", "say": "First a baseline."},
        {"shell": "sed -i 's/max_depth=6/max_depth=4/' train.py && git commit -qam shallower",
         "variants": [{"p": 0.5, "shell": "sed -i 's/max_depth=6/max_depth=8/' train.py && git commit -qam deeper"}]},
        {"finish": "Trained and committed."},
    ],
}


@pytest.fixture
def scenario() -> Scenario:
    return Scenario.model_validate(SCENARIO)


@pytest.fixture
def standin(scenario: Scenario, tmp_path: Path) -> StandIn:
    return StandIn(scenario, log_path=tmp_path / "standin.jsonl", seed=3)


@pytest.fixture
def base_url(standin: StandIn) -> Iterator[str]:
    with serve_in_thread(standin) as url:
        yield url


@pytest.fixture
def anthropic_client(base_url: str):
    import anthropic

    client = anthropic.Anthropic(base_url=base_url, api_key="dummy", max_retries=0)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def openai_client(base_url: str):
    import openai

    client = openai.OpenAI(base_url=base_url + "/v1", api_key="dummy", max_retries=0)
    try:
        yield client
    finally:
        client.close()


def reap(proc: subprocess.Popen[str]) -> None:
    """Kill `proc` if a test left it running, and close its pipes (a leaked pipe is a ResourceWarning)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()
