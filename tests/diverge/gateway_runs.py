"""Stand-in runs through the real gateway: a scripted agent (the Anthropic SDK) plays a seeded scenario.

Each run opens its own socket on a real `Gateway` in front of the stand-in model, which plays a scenario
whose steps vary with the run's model seed (the provider's nondeterminism, standing in for it); the agent
runs each tool call in a scripted environment and sends the result back, as a CLI does. The gateway writes
the run's transcript; the stand-in logs, per call, the step and the variant it played: the ground truth.

`expected(log_a, log_b, tool_result_at)` turns two runs' logs into the first divergence index and class
the comparison must find: the first call whose variant differs is a `response` divergence, unless the
environment gave a different tool result earlier (a `request` divergence at the call after it).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the HTTP client the anthropic SDK ships with

from orchestrator.diverge.compare import DivergenceClass
from orchestrator.gateway import ModelLimits
from orchestrator.gateway.server import Gateway
from orchestrator.gateway.thread import GatewayThread
from orchestrator.model import Scenario, StandIn, read_log, serve_in_thread
from orchestrator.specs.endpoints import Endpoint, Price, RateCard, RateCards

#: six experiments, each of which a seeded run may play differently (p = 0.25 each), then the finish
SCENARIO: dict[str, Any] = {
    "name": "tune",
    "title": "Tune the model",
    "steps": [
        *(
            {
                "say": f"Experiment {i}.",
                "shell": f"./run_experiment --depth {i}",
                "variants": [
                    {
                        "p": 0.25,
                        "say": f"Experiment {i}, deeper.",
                        "shell": f"./run_experiment --depth {i + 10}",
                    }
                ],
            }
            for i in range(6)
        ),
        {"finish": "Done: the best depth is committed."},
    ],
}
TOOLS = [
    {
        "name": "bash",
        "description": "Run a shell command in the workspace.",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    }
]
PROMPT = "Read program.md and follow it exactly."
RUN_DATE = dt.date(2026, 11, 30)


@dataclass(frozen=True)
class RecordedRun:
    run_id: str
    model_seed: int
    transcript: Path
    #: (step, variant) of each call, in call order, from the stand-in's log
    played: tuple[tuple[int | None, int], ...]
    #: the step whose tool result the environment changed (None: none)
    tool_result_at: int | None


def _output(command: str, step: int, changed: bool) -> str:
    score = 0.70 + (int(hashlib.sha256(command.encode()).hexdigest()[:4], 16) % 100) / 1000
    return f"experiment {step}: eval AUC {score:.3f}\n" + ("warning: cache was cold\n" if changed else "")


class StandInGateway:
    """A stand-in model and a gateway in front of it; `run()` records one scripted run's transcript."""

    def __init__(self, folder: Path, scenario: dict[str, Any] = SCENARIO) -> None:
        self.folder = folder
        self.log_path = folder / "standin.jsonl"
        self.standin = StandIn(Scenario.model_validate(scenario), log_path=self.log_path, seed=0)
        self._stack: list[Any] = []

    @contextmanager
    def running(self) -> Iterator[StandInGateway]:
        with serve_in_thread(self.standin) as url:
            endpoint = Endpoint(name="standin", api="anthropic", base_url=url, run_headers=True)
            cards = RateCards(
                [
                    (
                        Path("card.yaml"),
                        RateCard(date=dt.date(2026, 1, 1), models={"m": Price(input=3.0, output=15.0)}),
                    )
                ]
            )
            gateway = Gateway({"standin": endpoint}, socket_root=self.folder / "sock", ratecards=cards)
            with GatewayThread(gateway) as thread:
                self.gateway = thread
                yield self

    def run(self, run_id: str, model_seed: int, *, tool_result_at: int | None = None) -> RecordedRun:
        import anthropic

        transcript = self.folder / "transcripts" / f"{run_id}.jsonl.gz"
        sock = self.gateway.open_run(
            run_id, "standin", "m", ModelLimits(), transcript, seed=model_seed, run_date=RUN_DATE
        )
        http = httpx.Client(
            transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://sandbox", timeout=30
        )
        try:
            client = anthropic.Anthropic(
                base_url="http://sandbox", api_key="dummy", http_client=http, max_retries=0
            )
            messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
            for step in range(20):
                reply = client.messages.create(model="m", max_tokens=1024, tools=TOOLS, messages=messages)
                messages.append(
                    {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]}
                )
                uses = [b for b in reply.content if b.type == "tool_use"]
                if not uses:
                    break
                messages.append(
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": b.id,
                                "content": _output(b.input["command"], step, step == tool_result_at),
                            }
                            for b in uses
                        ],
                    }
                )
        finally:
            http.close()
            self.gateway.close_run(run_id)
        played = tuple((r["step"], r["variant"]) for r in read_log(self.log_path) if r["run_id"] == run_id)
        return RecordedRun(run_id, model_seed, transcript, played, tool_result_at)


def expected(a: RecordedRun, b: RecordedRun) -> tuple[int | None, DivergenceClass | None]:
    """The ground truth of a pair from what the stand-in logged and what the environment changed."""
    response_at = next((i for i, (x, y) in enumerate(zip(a.played, b.played, strict=True)) if x != y), None)
    changed = [s for s in (a.tool_result_at, b.tool_result_at) if s is not None]
    request_at = min(changed) + 1 if changed and a.tool_result_at != b.tool_result_at else None
    if request_at is not None and (response_at is None or request_at <= response_at):
        return request_at, DivergenceClass.REQUEST
    if response_at is not None:
        return response_at, DivergenceClass.RESPONSE
    return None, None
