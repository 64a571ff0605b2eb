"""A stand-in model for tests and demos: plays a scenario through the three wire APIs, statelessly.

    from orchestrator.model import StandIn, load_scenario, serve_in_thread
    standin = StandIn(load_scenario(path), log_path=tmp / "standin.jsonl")
    with serve_in_thread(standin) as base_url: ...   # http://127.0.0.1:PORT, the APIs under /v1
"""

from orchestrator.model.scenario import Scenario, Step, load_scenario, scenario_for_tests_task
from orchestrator.model.server import Fault, StandIn, log_totals, read_log, serve_in_thread

__all__ = ["Fault", "Scenario", "StandIn", "Step", "load_scenario", "log_totals", "read_log", "serve_in_thread",
           "scenario_for_tests_task"]
