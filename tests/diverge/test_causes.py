import json

import pytest

from orchestrator.diverge.causes import observe_causes, present
from orchestrator.diverge.compare import compare_runs
from orchestrator.specs.diverge import BaseRateControl, Cause
from tests.diverge.standin import Variation, pair
from tests.diverge.test_normalise import call


def _cause(observe: str, key: str | None = None, at_call: int | None = 0) -> Cause:
    control = None if at_call is None else BaseRateControl(at_call=at_call)
    return Cause(name="c", observe=observe, key=key, control=control)


def test_each_kind_of_observation() -> None:
    a = call(
        0,
        {"model": "m1", "temperature": 0},
        {"system_fingerprint": "fp_a", "choices": []},
        headers={"anthropic-beta": "x"},
    )
    b = call(
        0,
        {"model": "m1", "temperature": 1},
        {"system_fingerprint": "fp_b", "choices": []},
        headers={"anthropic-beta": "y"},
    )
    assert present(_cause("response_value_differs", "system_fingerprint"), a, b)
    assert not present(_cause("response_value_differs", "choices"), a, b)
    assert present(_cause("request_value_differs", "temperature"), a, b)
    assert not present(_cause("request_value_differs", "model"), a, b)
    assert present(_cause("request_header_differs", "anthropic-beta"), a, b)
    assert not present(_cause("response_header_differs", "openai-model"), a, b)  # absent on both sides
    failed = b.model_copy(update={"outcome": "provider_error"})
    assert present(_cause("outcome_differs"), a, failed) and not present(_cause("outcome_differs"), a, b)


def test_values_in_streamed_events_are_found_in_order() -> None:
    a, b = pair("opencode", 2, Variation("fingerprint", 1))
    c = compare_runs(a, b)
    assert c.first_divergence == 2
    seen = observe_causes(a, b, c, [_cause("response_value_differs", "system_fingerprint")])["c"]
    assert (seen.at_divergence, seen.at_control) == (True, False)
    # the first occurrence is what counts: the chunks carry it before the [DONE] line
    first = json.loads(b[2].response.events[0][1])
    assert first["system_fingerprint"] == "fp_9a0c33e5b1"


@pytest.mark.parametrize(("variation", "at_div"), [(Variation(), None), (Variation("stop", 2), None)])
def test_unobservable_points_are_none(variation: Variation, at_div: None) -> None:
    a, b = pair("mini-swe-agent", 3, variation)
    c = compare_runs(a, b)
    seen = observe_causes(a, b, c, [_cause("response_value_differs", "system_fingerprint", at_call=None)])[
        "c"
    ]
    assert (
        seen.at_divergence is at_div and seen.at_control is None
    )  # no divergence, or no call there; no control
    seen = observe_causes(a, b, c, [_cause("outcome_differs", at_call=50)])["c"]
    assert seen.at_control is None  # the runs made no call 50
