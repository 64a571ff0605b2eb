"""The stand-in driven through the official SDKs (anthropic, openai: test-only dependencies), with each
CLI's tool shapes: the scenario plays in order, and the usage the SDK parses equals the stand-in's log."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import anthropic
import pytest

from orchestrator.model import Fault, StandIn, log_totals, read_log
from tests.model import shapes

STEP1 = "sed -i 's/max_depth=6/max_depth=4/' train.py && git commit -qam shallower"
STEP1_ALT = "sed -i 's/max_depth=6/max_depth=8/' train.py && git commit -qam deeper"


def _anthropic_usage(u) -> dict[str, int]:
    extra = getattr(u, "output_tokens_details", None) or {}
    thinking = extra.get("thinking_tokens", 0) if isinstance(extra, dict) else getattr(extra, "thinking_tokens", 0)
    return {"input": u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
            "cached_input": u.cache_read_input_tokens, "cache_write": u.cache_creation_input_tokens,
            "output": u.output_tokens, "reasoning": thinking}


def _openai_usage(u, chat: bool) -> dict[str, int]:
    if chat:
        return {"input": u.prompt_tokens, "cached_input": u.prompt_tokens_details.cached_tokens, "cache_write": 0,
                "output": u.completion_tokens, "reasoning": u.completion_tokens_details.reasoning_tokens}
    return {"input": u.input_tokens, "cached_input": u.input_tokens_details.cached_tokens, "cache_write": 0,
            "output": u.output_tokens, "reasoning": u.output_tokens_details.reasoning_tokens}


@pytest.mark.parametrize("stream", [False, True])
def test_claude_code_shape_plays_the_scenario(anthropic_client, openai_client, tmp_path: Path, stream: bool) -> None:
    client = anthropic_client
    messages: list[dict] = [{"role": "user", "content": [{"type": "text", "text": shapes.PROMPT,
                                                          "cache_control": {"type": "ephemeral"}}]}]
    commands, usages = [], []
    for _ in range(6):
        kwargs = dict(model="claude-sonnet-4-5@seed=3", max_tokens=4096, system="You are Claude Code.",
                      tools=shapes.CLAUDE_TOOLS, messages=messages, thinking={"type": "enabled", "budget_tokens": 1024})
        if stream:
            with client.messages.stream(**kwargs) as s:
                message = s.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        usages.append(_anthropic_usage(message.usage))
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in message.content]})
        if message.stop_reason == "end_turn":
            assert message.content[-1].text == "Trained and committed."
            break
        (call,) = [b for b in message.content if b.type == "tool_use"]
        assert call.name == "Bash" and call.input["description"].startswith("sbx stand-in step")
        assert call.input["timeout"] == 600000
        commands.append(call.input["command"])
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok"}]})
    assert commands[0] == "./run_experiment" and commands[1] in (STEP1, STEP1_ALT) and len(commands) == 2
    log = read_log(tmp_path / "standin.jsonl")
    assert [r["usage"] for r in log] == usages
    assert [r["step"] for r in log] == [0, 1, 2]
    # a repeated prefix is cached: each call's cached input is exactly the previous call's input
    assert usages[0]["cached_input"] == 0
    assert [u["cached_input"] for u in usages[1:]] == [u["input"] for u in usages[:-1]]
    assert all(u["cache_write"] == u["input"] - u["cached_input"] > 0 for u in usages)
    assert all(0 < u["reasoning"] < u["output"] for u in usages)


@pytest.mark.parametrize("stream", [False, True])
def test_codex_shape_plays_the_scenario(anthropic_client, openai_client, tmp_path: Path, stream: bool) -> None:
    client = openai_client
    items: list[dict] = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": shapes.PROMPT}]}]
    commands, usages = [], []
    for _ in range(6):
        kwargs = dict(model="gpt-5.5", instructions="You are Codex.", input=items, tools=shapes.CODEX_TOOLS,
                      reasoning={"effort": "medium"}, store=False, extra_headers={"x-sbx-seed": "3"})
        if stream:
            with client.responses.stream(**kwargs) as s:
                response = s.get_final_response()
        else:
            response = client.responses.create(**kwargs)
        usages.append(_openai_usage(response.usage, chat=False))
        items += [o.model_dump(exclude_none=True) for o in response.output]
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            assert response.output_text == "Trained and committed."
            break
        assert calls[0].name == "exec_command"
        args = json.loads(calls[0].arguments)
        assert set(args) == {"cmd", "yield_time_ms"}
        commands.append(args["cmd"])
        items.append({"type": "function_call_output", "call_id": calls[0].call_id, "output": "ok"})
    assert commands[0] == "./run_experiment" and len(commands) == 2
    log = read_log(tmp_path / "standin.jsonl")
    assert [r["usage"] for r in log] == usages and [r["seed"] for r in log] == [3, 3, 3]
    assert [u["cached_input"] for u in usages[1:]] == [u["input"] for u in usages[:-1]]
    assert all(u["reasoning"] > 0 for u in usages)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("cli", ["pi", "mini"])
def test_chat_shapes_play_the_scenario(anthropic_client, openai_client, tmp_path: Path, stream: bool, cli: str) -> None:
    client = openai_client
    tools = shapes.PI_TOOLS if cli == "pi" else shapes.MINI_TOOLS
    system = "You are pi." if cli == "pi" else shapes.MINI_SYSTEM
    messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": shapes.PROMPT}]
    commands, usages = [], []
    for _ in range(6):
        kwargs = dict(model="fake-model", messages=messages, tools=tools)
        if stream:
            with client.chat.completions.stream(**kwargs, stream_options={"include_usage": True}) as s:
                completion = s.get_final_completion()
        else:
            completion = client.chat.completions.create(**kwargs)
        usages.append(_openai_usage(completion.usage, chat=True))
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            assert cli == "pi" and message.content == "Trained and committed."
            break
        (call,) = message.tool_calls
        assert call.function.name == "bash"
        args = json.loads(call.function.arguments)
        commands.append(args["command"])
        if args["command"] == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT":
            assert message.content == "Trained and committed."
            break
        messages.append(shapes.chat_tool_result(call.id, "ok"))
    expected_tail = ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"] if cli == "mini" else []
    assert commands[0] == "./run_experiment" and commands[2:] == expected_tail and len(commands) == 2 + len(expected_tail)
    log = read_log(tmp_path / "standin.jsonl")
    assert [r["usage"] for r in log] == usages
    assert log[-1]["action"] == "finish"
    assert [u["cached_input"] for u in usages[1:]] == [u["input"] for u in usages[:-1]]


def test_mini_text_mode_answers_in_its_fence(anthropic_client, openai_client) -> None:
    client = openai_client
    messages: list[dict] = [{"role": "system", "content": shapes.MINI_TEXT_SYSTEM}, {"role": "user", "content": "go"}]
    outputs = []
    for _ in range(3):
        content = client.chat.completions.create(model="m", messages=messages).choices[0].message.content
        outputs.append(content)
        messages += [{"role": "assistant", "content": content}, {"role": "user", "content": "output: ok"}]
    assert outputs[0].endswith("```mswea_bash_command\n./run_experiment\n```")
    assert outputs[0].startswith("THOUGHT: First a baseline.")
    assert outputs[2].endswith("```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```")


def test_opencode_title_call_takes_no_step(anthropic_client, openai_client, tmp_path: Path) -> None:
    client = openai_client
    title = client.chat.completions.create(model="fake-model", messages=[
        {"role": "system", "content": shapes.OPENCODE_TITLE_SYSTEM}, {"role": "user", "content": '"Read program.md"'}])
    assert title.choices[0].message.content == "Tune the flight-delay model"
    first = client.chat.completions.create(model="fake-model", tools=shapes.PI_TOOLS, messages=[
        {"role": "system", "content": "You are OpenCode."}, {"role": "user", "content": '"Read program.md"'}])
    assert json.loads(first.choices[0].message.tool_calls[0].function.arguments)["command"] == "./run_experiment"
    log = read_log(tmp_path / "standin.jsonl")
    assert [(r["action"], r["step"]) for r in log] == [("title", None), ("shell", 0)]


def test_chat_stream_without_include_usage_reports_none(anthropic_client, openai_client, tmp_path: Path) -> None:
    client = openai_client
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                                 tools=shapes.PI_TOOLS, stream=True))
    assert all(c.usage is None for c in chunks)
    (rec,) = read_log(tmp_path / "standin.jsonl")
    assert rec["usage_reported"] is False
    assert log_totals([rec]) == {"input": 0, "cached_input": 0, "cache_write": 0, "output": 0, "reasoning": 0}


def test_faults_answer_in_the_apis_error_shape(standin: StandIn, anthropic_client) -> None:
    standin.faults.append(Fault(status=429, retry_after="7"))
    standin.faults.append(Fault(status=529))
    client = anthropic_client
    with pytest.raises(anthropic.RateLimitError) as err:
        client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert err.value.response.headers["retry-after"] == "7"
    with pytest.raises(anthropic.APIStatusError) as err:
        client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert err.value.status_code == 529 and err.value.body["error"]["type"] == "overloaded_error"


def test_seeded_variation_is_reproducible_and_has_its_probability(scenario) -> None:
    from orchestrator.model.scenario import uniform

    picks = [scenario.pick(seed, 1)[1] for seed in range(4000)]
    assert picks == [scenario.pick(seed, 1)[1] for seed in range(4000)]
    share = picks.count(0) / len(picks)
    assert abs(share - 0.5) < 3 * (0.25 / 4000) ** 0.5  # within 3 standard errors of p = 0.5
    assert scenario.pick(11, 1)[2] == uniform(11, 1)
    # a step without variants never varies; past the end the model finishes
    assert {scenario.pick(seed, 0)[1] for seed in range(50)} == {-1}
    assert scenario.pick(0, 9)[0].finish == "Done."


def test_different_seeds_diverge_and_the_log_holds_the_ground_truth(anthropic_client, openai_client, tmp_path: Path, scenario) -> None:
    client = openai_client
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
                shapes.chat_tool_result("call_1", "ok")]
    seen = {}
    for seed in range(12):
        c = client.chat.completions.create(model=f"fake-model@seed={seed}", messages=messages, tools=shapes.PI_TOOLS)
        seen[seed] = json.loads(c.choices[0].message.tool_calls[0].function.arguments)["command"]
    assert set(seen.values()) == {STEP1, STEP1_ALT}
    log = read_log(tmp_path / "standin.jsonl")
    for rec in log:
        assert rec["variant"] == scenario.pick(rec["seed"], 1)[1]
        assert rec["arguments"]["command"] == seen[rec["seed"]]


def test_sbx_model_serve_command(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: one\nsteps:\n  - finish: all done\n")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "sbx"), "model", "serve", "--scenario", str(scenario),
                             "--port", "0", "--call-log", str(tmp_path / "log.jsonl")], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = line.split(" on ")[1].split()[0]
        req = urllib.request.Request(url + "/v1/chat/completions", method="POST", headers={"content-type": "application/json"},
                                     data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode())
        body = json.loads(urllib.request.urlopen(req, timeout=10).read())
        assert body["choices"][0]["message"]["content"] == "all done"
        deadline = time.monotonic() + 5
        while not (tmp_path / "log.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert read_log(tmp_path / "log.jsonl")[0]["usage"]["output"] > 0
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()


def test_bad_scenario_names_the_key(tmp_path: Path) -> None:
    from orchestrator.failures import ConfigError
    from orchestrator.model import load_scenario

    path = tmp_path / "s.yaml"
    path.write_text("steps:\n  - shell: ls\n    finish: both\n")
    with pytest.raises(ConfigError, match=r"s.yaml:2: steps.0: Value error, give exactly one"):
        load_scenario(path)


def test_packaged_ci_scenario_loads() -> None:
    from importlib.resources import files

    from orchestrator.model import load_scenario

    scenario = load_scenario(Path(str(files("orchestrator.model") / "scenarios" / "flight-delays.yaml")))
    assert [s.shell or s.finish for s in scenario.steps][0] == "./run_experiment"
    assert scenario.steps[-1].finish and scenario.steps[1].variants[0].p == 0.5
