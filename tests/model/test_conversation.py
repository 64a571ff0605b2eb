"""Reading requests: step counting, cached prefixes and tool arguments, without a server."""

from __future__ import annotations

from orchestrator.model.conversation import Tool, read, tokens
from orchestrator.model.reply import shell_arguments


def test_responses_turns_group_reasoning_message_and_call_items() -> None:
    first = [{"role": "user", "content": "go"}]
    turn = [{"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hm"}]},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"}]
    body = {"model": "m", "instructions": "sys", "input": first + turn}
    conv = read("openai-responses", body)
    assert (conv.tool_calls_made, conv.assistant_turns) == (1, 1)
    assert conv.prefix_tokens == read("openai-responses", {"model": "m", "instructions": "sys", "input": first}).input_tokens
    assert conv.input_tokens == conv.prefix_tokens + sum(tokens(i) for i in turn)


def test_string_input_and_no_tools_counts_assistant_turns() -> None:
    conv = read("openai-chat", {"model": "m", "messages": [
        {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]})
    assert conv.steps_done == 1 and conv.tool_calls_made == 0
    assert read("openai-responses", {"model": "m", "input": "hello"}).input_tokens == tokens({"role": "user", "content": "hello"})


def test_shell_arguments_follow_the_schema() -> None:
    array = Tool("shell", {"properties": {"command": {"type": "array"}, "timeout_ms": {"type": "integer", "maximum": 1000}}})
    assert shell_arguments(array, "ls", 2) == {"command": ["bash", "-lc", "ls"], "timeout_ms": 1000}
    other = Tool("run", {"properties": {"script": {"type": "string"}}})
    assert shell_arguments(other, "ls", 0) == {"script": "ls"}
    required = Tool("x", {"properties": {"line": {"type": "string"}}, "required": ["line"]})
    assert shell_arguments(required, "ls", 0) == {"line": "ls"}


def test_shell_tool_preference_and_markers() -> None:
    conv = read("anthropic", {"model": "m", "messages": [{"role": "user", "content": "x"}],
                              "tools": [{"name": "Read", "input_schema": {}}, {"name": "Bash", "input_schema": {}},
                                        {"name": "bash", "input_schema": {}}]})
    assert conv.shell_tool().name == "Bash" and not conv.is_title_request and not conv.wants_cache
