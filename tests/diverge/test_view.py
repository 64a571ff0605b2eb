"""One pair side by side: what each call asked and answered, bounded, the first divergence marked."""

from __future__ import annotations

import json

from orchestrator.diverge.compare import compare_runs
from orchestrator.diverge.view import MAX_TEXT, pair_view, request_text, response_text
from orchestrator.specs.transcript import CallRecord
from tests.diverge.standin import AGENTS, DEFAULT_STEPS, Step, Variation, pair


def test_every_agents_calls_read_as_the_commands_and_results_they_carry() -> None:
    for agent in AGENTS:
        a, b = pair(agent, 3, Variation("response", 2))
        view = pair_view("t", 1, "ra", "rb", a, b, compare_runs(a, b))
        shift = 1 if agent == "opencode" else 0
        (marked,) = [r for r in view.rows if r.first_divergence]
        assert marked.index == 2 + shift and marked.request_equal and marked.response_equal is False
        assert "echo hello > proof.txt && cat proof.txt" in marked.a.response, agent
        assert "cat proof.txt -la" in marked.b.response and "-la" not in marked.a.response, agent
        # the request of the call after a command carries that command's output
        after = next(r for r in view.rows if r.index == 2 + shift)
        assert DEFAULT_STEPS[1].output.splitlines()[0] in after.a.request, agent
        assert view.where and view.divergence_class == "response" and view.gaps == ()


def test_long_texts_are_cut_and_long_runs_show_the_calls_around_the_divergence() -> None:
    steps = tuple(Step(f"echo {i}", "x" * 10 + "\n") for i in range(60)) + (Step(None, text="done"),)
    from tests.diverge.standin import run_transcript, varied

    a = run_transcript("claude-code", 1, steps)
    steps_b, options = varied(steps, Variation("response", 45))
    b = run_transcript("claude-code", 2, steps_b, **options)
    view = pair_view("t", 1, "ra", "rb", a, b, compare_runs(a, b), max_calls=20, context=3)
    shown = [r.index for r in view.rows]
    assert shown[:3] == [0, 1, 2] and 45 in shown and shown[-1] == 48 and len(shown) <= 20
    assert view.gaps == (2, 48)
    # a huge answer is cut
    huge = json.loads(a[0].model_dump_json())
    huge["response"]["events"] = None
    huge["response"]["body"] = json.dumps({"content": [{"type": "text", "text": "y" * 50_000}]})
    huge["stream"] = False
    record = CallRecord.model_validate(huge)
    assert len(response_text(record)) < MAX_TEXT + 100
    huge["request"]["body"] = "z" * 50_000
    assert len(request_text(CallRecord.model_validate(huge))) < MAX_TEXT + 100
