"""A run that ended on its provider says why in words a person can act on: the endpoint, its address and the
last call's error, before the counts (issue 24, item 3: `sbx run`'s last line with the stand-in stopped)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.gateway.server import RunTotals
from orchestrator.run.model_attachment import provider_failure_message
from orchestrator.specs.endpoints import Endpoint

REFUSED = ("upstream connection failed: ClientConnectorError: Cannot connect to host 127.0.0.1:8765 ssl:default "
           "[Connect call failed ('127.0.0.1', 8765)]")


def _totals(**kw: object) -> RunTotals:
    return RunTotals(run_id="r", endpoint="standin-responses", model="m", transcript=Path("t"), **kw)  # type: ignore[arg-type]


STANDIN = Endpoint(name="standin-responses", api="openai-responses", base_url="http://127.0.0.1:8765", run_headers=True)
PAID = Endpoint(name="anthropic", api="anthropic", base_url="https://api.anthropic.com", key_env="K")


def test_a_stopped_endpoint_is_named_with_its_address_the_connection_error_and_the_fix() -> None:
    totals = _totals(calls=30, provider_errors=30, last_outcome="provider_error", last_error=REFUSED)
    message = provider_failure_message("standin-responses", STANDIN, totals, "exited")
    assert message == (f"endpoint standin-responses at http://127.0.0.1:8765 did not answer ({REFUSED}): start it "
                       "(the stand-in: sbx model serve --port 8765) or fix its base_url; "
                       "30 of 30 calls failed, the last with provider_error; the agent stopped with exited")
    paid = provider_failure_message("anthropic", PAID, totals, "exited")
    assert paid.startswith("endpoint anthropic at https://api.anthropic.com did not answer (")
    assert "): check the network or fix its base_url; 30 of 30" in paid


def test_an_endpoint_that_answered_with_errors_or_timed_out_is_told_apart() -> None:
    busy = _totals(calls=3, provider_errors=3, last_outcome="provider_error", last_error="upstream answered 529")
    assert provider_failure_message("anthropic", PAID, busy, "exited").startswith(
        "endpoint anthropic at https://api.anthropic.com answered with errors (upstream answered 529); 3 of 3")
    slow = _totals(calls=2, ok=1, upstream_timeouts=1, last_outcome="upstream_timeout",
                   last_error="upstream timed out (connect 10 s, idle 300 s)")
    assert provider_failure_message("openai", None, slow, "exited").startswith(
        "endpoint openai did not answer in time (upstream timed out (connect 10 s, idle 300 s)); 1 of 2 calls")
