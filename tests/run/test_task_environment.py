"""An ml task's declared environment (tasks/flight-delays-reference): what its runs' images are, what goes
into their config hash and record, and a whole run in the reference environment (Python 3.13, the
reference study's pins) in real containers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from orchestrator.agents import command_agent, resolve_agent
from orchestrator.failures import ConfigError
from orchestrator.home import Home
from orchestrator.ledger import Ledger, RunState
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.run.config_hash import config_differences, config_hash, run_config
from orchestrator.run.images import task_environment
from orchestrator.run.record import full_record
from orchestrator.specs import load_budget, load_task
from orchestrator.specs.task import load_any_task
from orchestrator.tasks.environment import default_cache

IMAGE = "sha256:" + "ab" * 32
REFERENCE = "flight-delays-reference"
ONE_EXPERIMENT = Path(__file__).parent / "agents" / "one_experiment.sh"
#: run_config of flight-delays (noop, smoke, model m1, the manifest below) before ml tasks could declare an
#: environment: runs on the standard images keep their hashes, so their studies' pairs still match
STANDARD_HASH = "d4af98e09ea6aa4a471fe165e302eadc2966e65cb80da7ab10857ae4eb1e44b3"


def _config(task: str | Path, data: Path) -> dict:
    req = RunRequest(task=load_task(task), budget=load_budget("smoke"), agent=resolve_agent("noop"), data_dir=data,
                     model="m1")
    return run_config(req, IMAGE)


def _bundle_copy(tmp_path: Path, **pins: str) -> Path:
    """flight-delays-reference copied (its repo still shared) with some pins changed."""
    src = load_task(REFERENCE)
    dest = tmp_path / REFERENCE
    dest.mkdir()
    spec = yaml.safe_load((src.root / "task.yaml").read_text())
    spec["repo"] = str(src.repo_dir.resolve())
    (dest / "task.yaml").write_text(yaml.safe_dump(spec))
    env = yaml.safe_load((src.root / "environment.yaml").read_text())
    env["packages"].update(pins)
    (dest / "environment.yaml").write_text(yaml.safe_dump(env))
    return dest


def test_runs_on_the_standard_images_keep_their_config_hash(data_dir: Path) -> None:
    config = _config("flight-delays", data_dir)
    assert "environment" not in config["task"] and "environment" not in config["task"]["spec"]
    assert config_hash(config) == STANDARD_HASH


def test_the_reference_task_is_flight_delays_with_the_studys_pins() -> None:
    standard, reference = load_task("flight-delays"), load_task(REFERENCE)
    assert reference.repo_dir.resolve() == standard.repo_dir.resolve()  # the repo is shared, not copied
    assert (reference.files, reference.contract, reference.data) == (standard.files, standard.contract, standard.data)
    assert task_environment(standard) is None
    env = task_environment(reference)
    assert env is not None and env.python == "3.13"
    assert {k: env.packages[k] for k in ("pandas", "numpy", "xgboost-cpu")} == \
        {"pandas": "2.3.3", "numpy": "2.5.3", "xgboost-cpu": "3.4.1"}
    assert task_environment(load_any_task("humanize-naturalsize-one-byte")) is None  # tests tasks: grader's own


def test_the_environments_pins_are_in_the_config_hash(data_dir: Path, tmp_path: Path) -> None:
    reference = _config(REFERENCE, data_dir)
    env = load_task(REFERENCE).python_env
    assert env is not None
    assert reference["task"]["environment"]["packages"] == env.packages
    assert reference["task"]["environment"]["digest"] == env.digest()
    other = _config(_bundle_copy(tmp_path, pandas="2.3.2"), data_dir)
    assert config_hash(other) != config_hash(reference)
    assert "task.environment.packages.pandas" in config_differences(reference, other)


@pytest.mark.parametrize(("environment", "message"), [
    ("missing.yaml", "does not exist"),
    ("../flight-delays-reference/environment.yaml", "without '..'"),
    ({"python": "3.9", "packages": {"pandas": "2.3.3"}}, "Python 3.9 cannot be had here"),
    ({"python": "3.13", "packages": {"pandas": ">=2"}}, "not an exact version"),
])
def test_an_environment_file_is_validated(tmp_path: Path, environment: object, message: str) -> None:
    bundle = _bundle_copy(tmp_path)
    spec = yaml.safe_load((bundle / "task.yaml").read_text())
    if isinstance(environment, dict):
        (bundle / "environment.yaml").write_text(yaml.safe_dump(environment))
    else:
        spec["environment"] = environment
    (bundle / "task.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(ConfigError, match=message):
        load_task(bundle)


# --- real containers: the reference environment's images (built once per session) ------------------------


@pytest.mark.docker
@pytest.mark.slow
def test_the_images_of_a_run_and_of_its_scorer_follow_the_task(docker_client, built_images,
                                                              reference_env_images) -> None:
    from orchestrator.run.evaluate import scorer_image
    from orchestrator.run.images import run_image, scorer_image_for

    def image_id(tag: str) -> str:
        return str(docker_client.images.get(tag).id)

    standard, reference = load_task("flight-delays"), load_task(REFERENCE)
    assert run_image(docker_client, standard).image_id == image_id(built_images["sandbox"].tag)
    assert run_image(docker_client, standard).environment is None
    chosen = run_image(docker_client, reference)
    assert chosen.image_id == image_id(reference_env_images["sandbox"].tag)
    assert reference.python_env is not None and chosen.environment == reference.python_env.digest()
    assert scorer_image_for(docker_client, standard) == image_id(built_images["scorer"].tag)
    assert scorer_image_for(docker_client, reference) == image_id(reference_env_images["scorer"].tag)
    # a rescore after the run's image is gone: the task's environment's scorer, not the standard one
    gone = "sha256:" + "0" * 64
    assert scorer_image(docker_client, gone, reference) == image_id(reference_env_images["scorer"].tag)
    assert scorer_image(docker_client, chosen.image_id, reference) == chosen.image_id


@pytest.mark.docker
@pytest.mark.slow
def test_a_run_in_the_reference_environment_is_metered_and_scored_in_it(
        docker_client, reference_env_images, home: Home, small_flight_data: Path, capsys) -> None:
    """One counted experiment through the CPU-meter gate and the experiment service on the 3.13 sandbox,
    the holdout scored in the same image, the environment on record."""
    from orchestrator.cli import main

    assert main(["images", "build", "--task", REFERENCE]) == 0  # built by the fixture: only found here
    printed = capsys.readouterr().out
    assert printed.count("up to date") == 2 and reference_env_images["sandbox"].tag in printed

    task = load_task(REFERENCE)
    req = RunRequest(task=task, budget=load_budget("smoke"), agent=command_agent(ONE_EXPERIMENT),
                     data_dir=small_flight_data, datasets=("holdout",))
    with Ledger(home.ledger_path) as ledger:
        lifecycle = RunLifecycle(home, ledger, docker_client)
        run_id = lifecycle.run(req, lifecycle.plan(req)).run_id
        record = full_record(ledger, run_id)
    assert record["status"] == "audited", (record["failure_reason"], record["events"][-3:])
    sandbox_id = docker_client.images.get(reference_env_images["sandbox"].tag).id
    assert record["image"] == sandbox_id
    assert task.python_env is not None and record["environment"] == task.python_env.digest()
    assert record["meta"]["config"]["task"]["environment"]["packages"]["pandas"] == "2.3.3"
    assert record["experiments_counted"] == 1
    [experiment] = record["experiments"]
    assert experiment["cpu_seconds"] > 0 and experiment["eval_score"] is not None
    assert record["cpu_seconds_metered"] > 0
    holdout = record["scores"]["holdout"]
    assert holdout["image"] == sandbox_id and holdout["status"] == "scored"
    assert 0.5 < record["holdout_score"] < 1.0
    print(f"reference run: experiment cpu {experiment['cpu_seconds']:.2f}s, "
          f"metered {record['cpu_seconds_metered']:.2f}s, eval {experiment['eval_score']:.4f}, holdout AUC {record['holdout_score']:.4f}, "
          f"scorer cpu {record['scorer_cpu_seconds']}")


@pytest.mark.docker
@pytest.mark.slow
def test_an_environment_that_cannot_be_built_leaves_the_run_planned(
        docker_client, reference_env_images, home: Home, small_flight_data: Path, tmp_path: Path) -> None:
    """A pin PyPI does not have: the build fails at prepare, a ConfigError that says how to build ahead;
    the run is never started (no infra retry)."""
    bundle = _bundle_copy(tmp_path, pandas="2.3.999")
    req = RunRequest(task=load_task(bundle), budget=load_budget("smoke"), agent=resolve_agent("noop"),
                     data_dir=small_flight_data, datasets=("holdout",))
    env = req.task.python_env
    assert env is not None
    with Ledger(home.ledger_path) as ledger:
        lifecycle = RunLifecycle(home, ledger, docker_client)
        run_id = lifecycle.plan(req)
        try:
            with pytest.raises(ConfigError, match=r"could not be built(.|\n)*sbx images build --task"):
                lifecycle.run(req, run_id)
        finally:  # the half-made wheelhouse of this environment
            shutil.rmtree(default_cache() / "wheelhouse" / env.digest(), ignore_errors=True)
        assert ledger.get_run(run_id).status == RunState.PLANNED
