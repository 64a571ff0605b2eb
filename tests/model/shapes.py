"""Request shapes of the five CLIs, as measured (../shared/research/agents-verified.md): their shell tools
and markers, for driving the stand-in without the CLIs themselves."""

from __future__ import annotations

from typing import Any

CLAUDE_TOOLS = [
    {"name": "Bash", "description": "Run a bash command", "input_schema": {
        "type": "object", "required": ["command"], "properties": {
            "command": {"type": "string"}, "description": {"type": "string"},
            "timeout": {"type": "number", "maximum": 600000}}}},
    {"name": "Read", "description": "Read a file", "input_schema": {
        "type": "object", "properties": {"file_path": {"type": "string"}}}},
]
CODEX_TOOLS = [
    {"type": "function", "name": "exec_command", "description": "Runs a command", "strict": False, "parameters": {
        "type": "object", "required": ["cmd"], "properties": {
            "cmd": {"type": "string"}, "workdir": {"type": "string"}, "yield_time_ms": {"type": "number"}}}},
    {"type": "function", "name": "apply_patch", "parameters": {"type": "object", "properties": {"input": {"type": "string"}}}},
]
PI_TOOLS = [
    {"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "bash", "description": "Execute a bash command", "parameters": {
        "type": "object", "required": ["command"], "properties": {
            "command": {"type": "string"}, "timeout": {"type": "number"}}}}},
]
MINI_TOOLS = [
    {"type": "function", "function": {"name": "bash", "parameters": {
        "type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}}}},
]
MINI_SYSTEM = ("You are a helpful assistant that can interact with a computer. When you are done, issue "
               "`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.")
MINI_TEXT_SYSTEM = MINI_SYSTEM + " Reply with exactly one block:\n```mswea_bash_command\nls\n```"
OPENCODE_TITLE_SYSTEM = "You are a title generator. You output ONLY a thread title. Nothing else."
PROMPT = "Read program.md and follow it exactly"


def chat_tool_result(call_id: str, output: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": output}
