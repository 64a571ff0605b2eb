"""A real agent CLI (pi) runs flight-delays-reference: the ML task in the reference study's environment
(Python 3.13, pandas 2.3.3, xgboost 3.4.1), through the gateway against the stand-in model.

pi's image is built on that environment's sandbox by `sbx images build --task flight-delays-reference
--agents pi` (the CLI, as a user builds it ahead; the environment's images are the session's
`reference_env_images`, found here, not built again). pi is a Node CLI, so the sandbox's Python does not
matter to it; the experiments it starts run on the environment's Python 3.13, metered by the CPU-meter gate,
and the delivered train.py is scored in the same image. mini-swe-agent cannot be built there (its wheels are
CPython 3.11): that is a ConfigError before any build (tests/images/test_agent_images.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.agents import resolve_agent
from orchestrator.agents.adapters import get_adapter
from orchestrator.home import Home
from orchestrator.ledger import Ledger
from orchestrator.run import RunRequest
from orchestrator.run.record import full_record
from orchestrator.specs import load_budget, load_task
from tests.run.standin_setup import (
    ENDPOINT_OF_API,
    MODEL,
    REAL_KEY,
    expected_cost,
    short_flight_delays,
    standin_gateway,
    truth,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASK = "flight-delays-reference"
AGENT = "pi"


@pytest.fixture(scope="module")
def pi_on_reference_sandbox(reference_env_images, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`sbx images build --task TASK --agents pi --json`: the environment's images (found), then pi on its sandbox."""
    env = {**os.environ, "SBX_HOME": str(tmp_path_factory.mktemp("images") / "home")}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "orchestrator", "images", "build", "--task", TASK, "--agents", AGENT,
                           "--json"], env=env, capture_output=True, text=True, timeout=1500, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(f"\nsbx images build --task {TASK} --agents {AGENT}: {time.monotonic() - start:.1f} s wall")
    return json.loads(proc.stdout)


def test_pi_runs_flight_delays_in_the_reference_environment_through_the_gateway(
        pi_on_reference_sandbox: dict[str, Any], reference_env_images, docker_client, home: Home, tmp_path: Path,
        small_flight_data: Path) -> None:
    task = load_task(TASK)
    assert task.python_env is not None
    built = pi_on_reference_sandbox
    env_sandbox = reference_env_images["sandbox"].tag
    # nothing standard was built: the environment's two images (found) and pi on its sandbox only
    assert built["images"] == [] and [i["name"] for i in built["agents"]] == [AGENT]
    assert sorted((i["target"], i["tag"], i["built"]) for i in built["tasks"]) == [
        ("sandbox", env_sandbox, False), ("scorer", reference_env_images["scorer"].tag, False)]
    [image] = built["agents"]
    assert docker_client.images.get(image["tag"]).labels["sbx.base"] == env_sandbox
    versions = image["versions"].splitlines()
    assert versions[0] == "Python 3.13.5" and "pandas==2.3.3" in versions and f"agent {AGENT} 1.6.0" in image["versions"]

    api = get_adapter(AGENT).wire_apis[0]
    with standin_gateway(tmp_path / "model", short_flight_delays()) as setup, Ledger(home.ledger_path) as ledger:
        req = RunRequest(task=task, budget=load_budget("smoke"), agent=resolve_agent(AGENT), data_dir=small_flight_data,
                         datasets=("holdout",), model=MODEL, endpoint=ENDPOINT_OF_API[api], seed=3)
        run_id, record, calls, usage = setup.run(home, ledger, docker_client, req)
        full = full_record(ledger, run_id)
    agent_log = (home.run_dir(run_id) / "agent.log").read_bytes()
    assert record.status == "audited", (record.failure_reason, agent_log[-3000:].decode(errors="replace"))

    # the scenario ran: one counted, metered experiment, train.py changed and committed, finish
    assert [(c["action"], c["step"]) for c in calls] == [("shell", 0), ("shell", 1), ("finish", 2)], calls
    assert record.experiments_counted == 1 and record.experiments_refused == 0 and record.commits == 2
    [experiment] = full["experiments"]
    assert experiment["cpu_seconds"] > 0 and experiment["eval_score"] is not None
    assert f"Eval AUC: {experiment['eval_score']:.4f}".encode() in agent_log  # pi's shell tool saw the experiment
    variant = next(c["variant"] for c in calls if c["step"] == 1)
    depth = "max_depth=8" if variant == 0 else "max_depth=4"
    assert depth in (home.delivered_dir(run_id) / "workspace" / "train.py").read_text()
    assert record.cpu_seconds_metered is not None and record.cpu_seconds_metered >= experiment["cpu_seconds"]

    # in the environment: the run's image is pi's, on the 3.13 sandbox; the holdout is scored in that image
    run_image = docker_client.images.get(image["tag"]).id
    assert record.image == full["image"] == run_image
    assert full["meta"]["sandbox_image"] == env_sandbox
    assert full["environment"] == full["meta"]["environment"] == task.python_env.digest()
    holdout = full["scores"]["holdout"]
    assert holdout["status"] == "scored" and holdout["image"] == run_image
    assert 0.5 < full["holdout_score"] < 1.0 and full["compliant"] is True

    # the ledger's usage is the stand-in's own count, exactly; cost = tokens x rate card; the key stays out
    t = truth(calls)
    assert usage is not None and usage.closed and (usage.api, usage.model) == (api, MODEL)
    assert usage.agent_version == image["version"] == get_adapter(AGENT).version
    assert (usage.calls, usage.ok, usage.refused, usage.provider_errors) == (3, 3, 0, 0)
    assert (usage.input_tokens, usage.cached_input_tokens, usage.cache_write_tokens, usage.output_tokens) == (
        t["input"], t["cached_input"], t["cache_write"], t["output"])
    assert t["input"] > 0 and t["output"] > 0
    assert usage.cost_usd == pytest.approx(expected_cost(calls), rel=1e-9)
    assert REAL_KEY.encode() not in agent_log and REAL_KEY.encode() not in home.ledger_path.read_bytes()
    print(f"\n{AGENT} on {TASK}: agent {record.wall_seconds:.1f} s; experiment {experiment['cpu_seconds']:.2f} CPU-s "
          f"(eval {experiment['eval_score']:.4f}), metered {record.cpu_seconds_metered:.2f} CPU-s; holdout AUC "
          f"{full['holdout_score']:.4f} (scorer {full['scorer_cpu_seconds']} CPU-s); input tokens {usage.input_tokens} "
          f"(cached {usage.cached_input_tokens}), output {usage.output_tokens}, cost ${usage.cost_usd:.4f}")


def test_mini_swe_agent_is_refused_on_the_reference_sandbox_before_anything_is_fetched(
        reference_env_images, docker_client, tmp_path: Path) -> None:
    """build_agent_images itself (any caller, not only the CLI) reads the sandbox's recorded Python first:
    3.13 against a 3.11 wheel closure is a ConfigError, and nothing is fetched into the cache."""
    from orchestrator.failures import ConfigError
    from orchestrator.images.agents import build_agent_images
    from orchestrator.paths import images_root

    sandbox = reference_env_images["sandbox"].tag
    with pytest.raises(ConfigError, match=rf"mini-swe-agent cannot be built on {sandbox}: its Python is 3\.13\.5"):
        build_agent_images(docker_client, [AGENT, "mini-swe-agent"], sandbox_tag=sandbox,
                           agents_dir=images_root() / "agents", cache=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_pi_on_the_reference_sandbox_is_the_standard_sandboxs_install(
        pi_on_reference_sandbox: dict[str, Any], reference_env_images, agent_image, sandbox_image, docker_client) -> None:
    """An npm agent installs once, in the standard sandbox, and that install is what every other sandbox
    gets (its tree the same bytes: the agent-tree digest of both images); a pip agent installs in its own
    sandbox, whose Python makes its venv."""
    from orchestrator.images.agents.build import install_stage_image

    def tree(versions: str) -> str:
        return next(line for line in versions.splitlines() if line.startswith("agent-tree "))

    env_sandbox = reference_env_images["sandbox"].tag
    assert install_stage_image(docker_client, get_adapter(AGENT), env_sandbox) == sandbox_image
    assert install_stage_image(docker_client, get_adapter("mini-swe-agent"), env_sandbox) == env_sandbox
    on_reference = docker_client.containers.run(
        next(i["tag"] for i in pi_on_reference_sandbox["agents"] if i["name"] == AGENT), ["/opt/sbx/versions.txt"],
        entrypoint=["cat"], remove=True, network_mode="none", user="agent").decode()
    assert tree(on_reference) == tree(agent_image(AGENT).versions)
