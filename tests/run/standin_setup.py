"""The model side of runs in tests: the stand-in model on the host, an endpoints file naming it once per wire
API (with a "real" key the gateway must keep out of every sandbox), a rate card pricing it, and the host's
gateway. Shared by tests/run (whole runs of CLI and hostile agents) and tests/study (a study of CLIs)."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from orchestrator.home import Home
from orchestrator.ledger import Ledger, ModelUsage, RunRecord
from orchestrator.model import StandIn, load_scenario, read_log, serve_in_thread
from orchestrator.model.scenario import Scenario
from orchestrator.paths import REPO_ROOT
from orchestrator.run import RunLifecycle, RunRequest
from orchestrator.run.gateway_host import GatewayHost
from orchestrator.specs.endpoints import Price
from orchestrator.specs.usage import TokenUsage

if TYPE_CHECKING:
    import docker

MODEL = "sbx-standin"
KEY_ENV = "SBX_TEST_STANDIN_REAL_KEY"
#: the key the gateway holds and injects upstream; nothing in a sandbox may ever see it
REAL_KEY = "sk-test-REALKEY-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
PRICE = Price(input=3.0, cached_input=0.3, cache_write=3.75, output=15.0)
CARD_DATE = dt.date(2000, 1, 1)
ENDPOINT_OF_API = {"anthropic": "standin-anthropic", "openai-chat": "standin-chat",
                   "openai-responses": "standin-responses"}
FLIGHT_DELAYS = REPO_ROOT / "orchestrator" / "model" / "scenarios" / "flight-delays.yaml"


def short_flight_delays() -> Scenario:
    """flight-delays.yaml without its second experiment (CI time): run ./run_experiment, change train.py and
    commit (the seeded step), finish."""
    full = load_scenario(FLIGHT_DELAYS)
    return full.model_copy(update={"steps": (full.steps[0], full.steps[1], full.steps[3])})


@dataclass
class StandinSetup:
    standin: StandIn
    base_url: str
    log_path: Path
    endpoints_file: Path
    ratecards_dir: Path
    host: GatewayHost

    def calls(self, run_id: str) -> list[dict[str, Any]]:
        """The stand-in's own log of the calls of one run (the ground truth)."""
        return [c for c in read_log(self.log_path) if c["run_id"] == run_id] if self.log_path.exists() else []

    def run(self, home: Home, ledger: Ledger, client: docker.DockerClient, req: RunRequest) -> GatewayRun:
        """Plan `req` and run it through the whole lifecycle with this gateway."""
        lifecycle = RunLifecycle(home, ledger, client, gateway=self.host)
        run_id = lifecycle.plan(req)
        record = lifecycle.run(req, run_id)
        return GatewayRun(run_id, record, self.calls(run_id), ledger.usage.of_run(run_id))


class GatewayRun(NamedTuple):
    """A run through the gateway: its final record, the stand-in's log of its calls, the ledger's usage."""

    run_id: str
    record: RunRecord
    calls: list[dict[str, Any]]
    usage: ModelUsage | None


def write_model_files(folder: Path, base_url: str) -> tuple[Path, Path]:
    """endpoints.yaml (the stand-in once per API, its key from KEY_ENV) and ratecards/ pricing MODEL."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["endpoints:"]
    for api, name in ENDPOINT_OF_API.items():
        lines.append(f"  - {{name: {name}, api: {api}, base_url: '{base_url}', key_env: {KEY_ENV}, "
                     f"run_headers: true, models: [{MODEL}]}}")
    endpoints = folder / "endpoints.yaml"
    endpoints.write_text("\n".join(lines) + "\n")
    cards = folder / "ratecards"
    cards.mkdir(exist_ok=True)
    p = PRICE
    (cards / f"{CARD_DATE.isoformat()}.yaml").write_text(
        f"date: {CARD_DATE.isoformat()}\nmodels:\n  {MODEL}: {{input: {p.input}, cached_input: {p.cached_input}, "
        f"cache_write: {p.cache_write}, output: {p.output}}}\n")
    return endpoints, cards


@contextlib.contextmanager
def standin_gateway(folder: Path, scenario: Scenario | None = None, seed: int = 0) -> Iterator[StandinSetup]:
    """The stand-in (playing `scenario`, default flight-delays), the model files and a started gateway."""
    saved = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = REAL_KEY
    log_path = folder / "standin.jsonl"
    standin = StandIn(scenario or load_scenario(FLIGHT_DELAYS), log_path=log_path, seed=seed)
    try:
        with serve_in_thread(standin) as base_url:
            endpoints, cards = write_model_files(folder, base_url)
            with GatewayHost.from_files(endpoints, cards) as host:
                yield StandinSetup(standin, base_url, log_path, endpoints, cards, host)
    finally:
        if saved is None:
            os.environ.pop(KEY_ENV, None)
        else:
            os.environ[KEY_ENV] = saved


def truth(calls: list[dict[str, Any]]) -> dict[str, int]:
    """Token totals of the calls whose usage the client could see, from the stand-in's log."""
    keys = ("input", "cached_input", "cache_write", "output", "reasoning")
    return {k: sum(c["usage"][k] for c in calls if c["usage_reported"]) for k in keys}


def expected_cost(calls: list[dict[str, Any]]) -> float:
    """tokens x rate card, call by call, from the stand-in's own counts."""
    return sum(PRICE.cost(TokenUsage(**c["usage"])) for c in calls if c["usage_reported"])
