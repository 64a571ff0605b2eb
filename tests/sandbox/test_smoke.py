"""The foundation end to end: the starting train.py trains inside the sandbox image on real flight data."""

import pytest

from orchestrator.sandbox.smoke import run_starting_code
from orchestrator.specs import load_budget, load_task

pytestmark = pytest.mark.docker


def test_starting_code_trains_in_the_sandbox_as_uid_1000_without_network(docker_client, built_images, flight_data):
    task, budget = load_task("flight-delays"), load_budget("smoke")
    result = run_starting_code(docker_client, built_images["sandbox"].tag, task, budget, data_dir=flight_data)
    assert result.train_exit_code == 0, result.train_output[-2000:]
    assert result.whoami == "1000"
    assert result.eval_auc is not None and 0.6 < result.eval_auc < 0.8, result.eval_auc
    assert result.validate_exit_code == 0 and result.validate_output.strip().endswith("CONTRACT OK"), result.validate_output
    assert result.interfaces == ["lo"]  # network none: loopback only


def test_smoke_container_is_removed(docker_client, built_images, small_flight_data):
    run_starting_code(docker_client, built_images["sandbox"].tag, load_task("flight-delays"), load_budget("smoke"),
                      data_dir=small_flight_data)
    assert docker_client.containers.list(all=True, sparse=True, filters={"label": "sbx.kind=smoke"}) == []
