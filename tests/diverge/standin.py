"""Stand-in runs: transcripts shaped like the five agents' real traffic, with every per-run random value drawn.

The request and response shapes follow what was recorded from Claude Code 2.1.332, Codex 0.171.0,
OpenCode 1.18.33, pi 1.6.0 and mini-swe-agent 2.4.6 against a local fake model
(/work/shared/research/agents-verified.md section 3; agents.md section 5 for the ids). Two runs of one
scenario share every word and differ only in what the providers and agents randomise (ids, timestamps,
session values, stream padding, cache accounting, ping placement), unless a `Variation` changes one step;
`expected()` is the ground truth the stand-in logs for that variation.
"""

from __future__ import annotations

import json
import random
import string
import uuid
from dataclasses import dataclass, replace
from typing import Any, Literal

from orchestrator.diverge.compare import DivergenceClass
from orchestrator.specs.transcript import REDACTED, CallRecord

AGENTS = ("claude-code", "codex", "opencode", "pi", "mini-swe-agent")
_B62 = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Step:
    """One model call's answer: a shell command to run (and what it printed), or a final text."""

    command: str | None
    output: str = ""
    text: str = ""
    reasoning: str = "Let me look at the repository first."


DEFAULT_STEPS = (
    Step("ls", "README.md\nsrc\n"),
    Step("cat README.md", "# demo\nCreate proof.txt with hello.\n"),
    Step("echo hello > proof.txt && cat proof.txt", "hello\n"),
    Step("git status --short", "?? proof.txt\n"),
    Step(None, text="Created proof.txt containing hello."),
)


@dataclass(frozen=True)
class Variation:
    """What run B does differently from run A, and at which step."""

    kind: Literal["none", "response", "tool_result", "start", "order", "stop", "fingerprint"] = "none"
    at: int = 0


@dataclass
class _Random:
    """The random values of one run: ids, timestamps, session values, padding."""

    rng: random.Random

    def b62(self, n: int) -> str:
        return "".join(self.rng.choice(_B62) for _ in range(n))

    def hex(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def fernet(self) -> str:  # encrypted reasoning and thinking signatures look like this and differ per call
        return "gAAAAAB" + self.b62(120)


class _Run:
    def __init__(self, agent: str, seed: int, *, thinking: bool, reasoning: bool, fingerprint: str) -> None:
        self.agent = agent
        self.r = _Random(random.Random(seed))
        self.thinking = thinking
        self.reasoning = reasoning
        self.fingerprint = fingerprint
        self.session = self.r.uuid()
        self.device = self.r.hex(64)
        self.installation = self.r.uuid()
        self.clock = 1_764_500_000.0 + self.r.rng.uniform(0, 86_400)
        self.history: list[dict[str, Any]] = []  # abstract turns: user / call / result / text

    # --- one call ---------------------------------------------------------------------------------

    def record(
        self, index: int, step: Step, speaker: str | None, request: tuple[str, str, dict, dict]
    ) -> CallRecord:
        api, path, headers, body = request
        response = self.respond(api, step)
        self.clock += self.r.rng.uniform(1.5, 4.0)
        text = json.dumps(body, separators=(",", ":"))
        headers = {**headers, "host": "127.0.0.1:8765", "content-length": str(len(text))}
        stream = body.get("stream", False)
        return CallRecord.model_validate_json(
            json.dumps(
                {
                    "v": 1,
                    "index": index,
                    "api": api,
                    "method": "POST",
                    "path": path,
                    "started_at": self.clock,
                    "ttfb_s": 0.2,
                    "total_s": 0.9,
                    "request": {"headers": headers, "body": text},
                    "response": {
                        "status": 200,
                        "headers": {
                            "content-type": "text/event-stream" if stream else "application/json",
                            "request-id": "req_" + self.r.b62(24),
                            "date": "Sun, 30 Nov 2025 10:00:00 GMT",
                        },
                        "body": None if stream else json.dumps(response),
                        "events": [[n, d if isinstance(d, str) else json.dumps(d)] for n, d in response]
                        if stream
                        else None,
                    },
                    "stream": stream,
                    "usage": {
                        "input": 1200,
                        "cached_input": 0,
                        "cache_write": 0,
                        "output": 40,
                        "reasoning": 0,
                    },
                    "cost_usd": None,
                    "outcome": "ok",
                    "error": None,
                    "speaker": speaker,
                }
            )
        )

    def usage_cache(self) -> int:
        return self.r.rng.choice([0, 0, 1024, 2048])  # whether the provider's cache was warm: random per run

    # --- responses by API ------------------------------------------------------------------------------

    def respond(self, api: str, step: Step) -> Any:
        if api == "anthropic":
            return self.anthropic_response(step)
        if api == "openai-responses":
            return self.responses_response(step)
        return self.chat_response(step)

    def anthropic_response(self, step: Step) -> list:
        msg, tool = "msg_01" + self.r.b62(22), "toolu_01" + self.r.b62(22)
        ev: list = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": msg,
                        "type": "message",
                        "role": "assistant",
                        "model": "claude-sonnet-4-5",
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": 40,
                            "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": self.usage_cache(),
                            "output_tokens": 1,
                        },
                    },
                },
            ),
        ]
        blocks: list[dict] = []
        if self.thinking:
            sig = self.r.fernet()
            blocks.append({"type": "thinking", "thinking": step.reasoning, "signature": sig})
            ev += [
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "thinking_delta", "thinking": step.reasoning},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "signature_delta", "signature": sig},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ]
        i = len(blocks)
        if step.command is None:
            blocks.append({"type": "text", "text": step.text})
            ev += [
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "text_delta", "text": step.text},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": i}),
            ]
        else:
            args = {"command": step.command, "description": "Run " + step.command.split()[0]}
            blocks.append({"type": "tool_use", "id": tool, "name": "Bash", "input": args})
            ev += [
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "tool_use", "id": tool, "name": "Bash", "input": {}},
                    },
                ),
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)},
                    },
                ),
                ("content_block_stop", {"type": "content_block_stop", "index": i}),
            ]
        ev += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {
                        "stop_reason": "end_turn" if step.command is None else "tool_use",
                        "stop_sequence": None,
                    },
                    "usage": {"output_tokens": 37},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        ev.insert(self.r.rng.randrange(1, len(ev)), ("ping", {"type": "ping"}))  # keep-alives land anywhere
        self.history.append({"kind": "assistant", "blocks": blocks, "step": step})
        return ev

    def responses_response(self, step: Step) -> list:
        resp = "resp_" + self.r.hex(48)
        created = int(self.clock)
        seq = iter(range(1000))
        head = {
            "id": resp,
            "object": "response",
            "created_at": created,
            "model": "gpt-5.5",
            "output": [],
            "parallel_tool_calls": True,
            "store": False,
            "tool_choice": "auto",
            "usage": None,
        }
        ev: list = [
            (
                "response.created",
                {
                    "type": "response.created",
                    "sequence_number": next(seq),
                    "response": {**head, "status": "in_progress"},
                },
            ),
            (
                "response.in_progress",
                {
                    "type": "response.in_progress",
                    "sequence_number": next(seq),
                    "response": {**head, "status": "in_progress"},
                },
            ),
        ]
        items: list[dict] = []
        if self.reasoning:
            rs = {
                "id": "rs_" + self.r.hex(48),
                "type": "reasoning",
                "summary": [],
                "encrypted_content": self.r.fernet(),
            }
            items.append(rs)
            ev += [
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "sequence_number": next(seq),
                        "output_index": 0,
                        "item": {**rs, "encrypted_content": None},
                    },
                ),
                (
                    "response.output_item.done",
                    {
                        "type": "response.output_item.done",
                        "sequence_number": next(seq),
                        "output_index": 0,
                        "item": rs,
                    },
                ),
            ]
        k = len(items)
        if step.command is None:
            msg = "msg_" + self.r.hex(48)
            item = {
                "id": msg,
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
            ev += [
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "sequence_number": next(seq),
                        "output_index": k,
                        "item": {**item, "status": "in_progress", "content": []},
                    },
                ),
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "sequence_number": next(seq),
                        "item_id": msg,
                        "output_index": k,
                        "content_index": 0,
                        "delta": step.text,
                        "obfuscation": self.r.b62(self.r.rng.randint(1, 12)),
                    },
                ),
                (
                    "response.output_text.done",
                    {
                        "type": "response.output_text.done",
                        "sequence_number": next(seq),
                        "item_id": msg,
                        "output_index": k,
                        "content_index": 0,
                        "text": step.text,
                    },
                ),
                (
                    "response.output_item.done",
                    {
                        "type": "response.output_item.done",
                        "sequence_number": next(seq),
                        "output_index": k,
                        "item": item,
                    },
                ),
            ]
        else:
            fc, call = "fc_" + self.r.hex(48), "call_" + self.r.b62(24)
            name = "exec_command" if self.agent == "codex" else "bash"
            args = json.dumps({"cmd": step.command} if self.agent == "codex" else {"command": step.command})
            item = {
                "id": fc,
                "type": "function_call",
                "status": "completed",
                "arguments": args,
                "call_id": call,
                "name": name,
            }
            ev += [
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "sequence_number": next(seq),
                        "output_index": k,
                        "item": {**item, "status": "in_progress", "arguments": ""},
                    },
                ),
                (
                    "response.function_call_arguments.delta",
                    {
                        "type": "response.function_call_arguments.delta",
                        "sequence_number": next(seq),
                        "item_id": fc,
                        "output_index": k,
                        "delta": args,
                        "obfuscation": self.r.b62(self.r.rng.randint(1, 12)),
                    },
                ),
                (
                    "response.function_call_arguments.done",
                    {
                        "type": "response.function_call_arguments.done",
                        "sequence_number": next(seq),
                        "item_id": fc,
                        "output_index": k,
                        "arguments": args,
                    },
                ),
                (
                    "response.output_item.done",
                    {
                        "type": "response.output_item.done",
                        "sequence_number": next(seq),
                        "output_index": k,
                        "item": item,
                    },
                ),
            ]
        items.append(item)
        usage = {
            "input_tokens": 900,
            "input_tokens_details": {"cached_tokens": self.usage_cache()},
            "output_tokens": 30,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 930,
        }
        ev.append(
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "sequence_number": next(seq),
                    "response": {**head, "status": "completed", "output": items, "usage": usage},
                },
            )
        )
        self.history.append({"kind": "assistant", "items": items, "step": step})
        return ev

    def chat_response(self, step: Step) -> Any:
        cid, created, call = "chatcmpl-" + self.r.b62(29), int(self.clock), "call_" + self.r.b62(24)
        if step.command is None:
            message = {"role": "assistant", "content": step.text, "tool_calls": None}
        else:
            args = json.dumps({"command": step.command})
            message = {
                "role": "assistant",
                "content": None if self.agent == "mini-swe-agent" else "",
                "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": "bash", "arguments": args}}
                ],
            }
        self.history.append({"kind": "assistant", "message": message, "step": step})
        finish = "stop" if step.command is None else "tool_calls"
        usage = {
            "prompt_tokens": 700,
            "completion_tokens": 25,
            "total_tokens": 725,
            "prompt_tokens_details": {"cached_tokens": self.usage_cache()},
        }
        if self.agent == "mini-swe-agent":  # non-streaming
            return {
                "id": cid,
                "object": "chat.completion",
                "created": created,
                "model": "fake-model",
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": usage,
                "system_fingerprint": self.fingerprint,
            }

        def chunk(delta: dict, finish_reason: str | None = None, **extra: Any) -> dict:
            return {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": "fake-model",
                "system_fingerprint": self.fingerprint,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
                "usage": None,
                "obfuscation": self.r.b62(self.r.rng.randint(1, 12)),
                **extra,
            }

        ev: list = [(None, chunk({"role": "assistant", "content": ""}))]
        if step.command is None:
            ev.append((None, chunk({"content": step.text})))
        else:
            tc = message["tool_calls"][0]
            ev.append(
                (
                    None,
                    chunk(
                        {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": call,
                                    "type": "function",
                                    "function": {"name": "bash", "arguments": ""},
                                }
                            ]
                        }
                    ),
                )
            )
            ev.append(
                (
                    None,
                    chunk(
                        {"tool_calls": [{"index": 0, "function": {"arguments": tc["function"]["arguments"]}}]}
                    ),
                )
            )
        ev.append((None, chunk({}, finish)))
        final = chunk({})
        final.update(choices=[], usage=usage)
        final.pop("obfuscation")
        ev.append((None, final))
        ev.append((None, "[DONE]"))
        return ev


# --- requests by agent -------------------------------------------------------------------------------

_BASH_SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "The command"}, "id": {"type": "string"}},
    "required": ["command"],
}


def _claude_code(run: _Run, prompt: str) -> tuple[str, str, dict, dict]:
    messages: list[dict] = []
    for turn in run.history:
        if turn["kind"] == "user":
            messages.append({"role": "user", "content": [{"type": "text", "text": turn["text"]}]})
        elif turn["kind"] == "assistant":
            messages.append({"role": "assistant", "content": turn["blocks"]})
        elif turn["kind"] == "result":
            tool_use = next(b for b in turn["answers"]["blocks"] if b["type"] == "tool_use")
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": tool_use["id"],
                            "content": turn["output"],
                            "is_error": False,
                        }
                    ],
                }
            )
    headers = {
        "accept": "application/json",
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
        "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27",
        "user-agent": "claude-cli/2.1.332 (external, sdk-cli)",
        "x-api-key": REDACTED,
        "x-app": "cli",
        "x-claude-code-session-id": run.session,
        "x-stainless-arch": "x64",
        "x-stainless-lang": "js",
        "x-stainless-os": "Linux",
        "x-stainless-package-version": "0.70.0",
        "x-stainless-retry-count": "0",
        "x-stainless-runtime": "node",
        "x-stainless-runtime-version": "v22.23.5",
        "x-stainless-timeout": "600",
    }
    body = {
        "model": "claude-sonnet-4-5",
        "messages": messages,
        "system": [
            {
                "type": "text",
                "text": "x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli;",
            },
            {
                "type": "text",
                "text": "You are Claude Code, Anthropic's official CLI for Claude.",
                "cache_control": {"type": "ephemeral"},
            },
        ],
        "tools": [{"name": "Bash", "description": "Run a shell command", "input_schema": _BASH_SCHEMA}],
        "metadata": {
            "user_id": json.dumps({"device_id": run.device, "account_uuid": "", "session_id": run.session})
        },
        "max_tokens": 32000,
        "stream": True,
    }
    if run.thinking:
        body["thinking"] = {"type": "enabled", "budget_tokens": 31999}
    return "anthropic", "/v1/messages?beta=true", headers, body


def _responses_items(run: _Run, *, with_ids: bool) -> list[dict]:
    items: list[dict] = []
    for turn in run.history:
        if turn["kind"] == "user":
            items.append(
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": turn["text"]}]}
            )
        elif turn["kind"] == "assistant":
            for item in turn["items"]:
                kept = {k: v for k, v in item.items() if k != "status" and (with_ids or k != "id")}
                if item["type"] == "message":
                    kept["content"] = [{"type": "output_text", "text": c["text"]} for c in item["content"]]
                items.append(kept)
        elif turn["kind"] == "result":
            call = next(i for i in turn["answers"]["items"] if i["type"] == "function_call")
            items.append(
                {"type": "function_call_output", "call_id": call["call_id"], "output": turn["output"]}
            )
    return items


def _codex(run: _Run, prompt: str) -> tuple[str, str, dict, dict]:
    turn_meta = json.dumps(
        {
            "installation_id": run.installation,
            "session_id": run.session,
            "thread_id": run.session,
            "turn_id": run.session[:8] + "-turn",
            "cwd": "/work",
            "git_head": "3f2a9c1",
            "turn_started_at_unix_ms": int(run.clock * 1000),
        }
    )
    headers = {
        "authorization": REDACTED,
        "content-type": "application/json",
        "accept": "text/event-stream",
        "accept-encoding": "zstd,gzip",
        "originator": "codex_exec",
        "user-agent": "codex_exec/0.171.0 (Debian 12.0.0; x86_64) unknown (codex_exec; 0.171.0)",
        "session-id": run.session,
        "thread-id": run.session,
        "x-client-request-id": run.session,
        "x-codex-window-id": run.session + ":0",
        "x-codex-turn-metadata": turn_meta,
        "x-codex-beta-features": "remote_compaction_v2",
    }
    env = "<environment_context>\n  <cwd>/work</cwd>\n  <shell>bash</shell>\n</environment_context>"
    body = {
        "model": "gpt-5.5",
        "instructions": "You are Codex, a coding agent.",
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "<permissions>full</permissions>"}],
            },
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": env}]},
            *_responses_items(run, with_ids=False),
        ],
        "tools": [
            {
                "type": "function",
                "name": "exec_command",
                "description": "Run a command",
                "strict": False,
                "parameters": {
                    "type": "object",
                    "properties": {"cmd": {"type": "string"}},
                    "required": ["cmd"],
                },
            }
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": True,
        "reasoning": {"effort": "medium"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": run.session,
        "text": {"verbosity": "low"},
        "client_metadata": {"x-codex-installation-id": run.installation},
    }
    return "openai-responses", "/v1/responses", headers, body


def _pi(run: _Run, prompt: str) -> tuple[str, str, dict, dict]:
    headers = {
        "authorization": REDACTED,
        "content-type": "application/json",
        "accept": "application/json",
        "user-agent": "pi/1.6.0 (linux; node/v22.23.5; x64)",
        "session-id": run.session,
        "x-client-request-id": run.r.uuid(),
        "x-stainless-lang": "js",
        "x-stainless-retry-count": "0",
        "x-stainless-package-version": "6.10.0",
        "x-stainless-os": "Linux",
        "x-stainless-arch": "x64",
    }
    body = {
        "model": "fake-model",
        "input": [
            {"role": "developer", "content": "You are an expert coding assistant."},
            *_responses_items(run, with_ids=True),
        ],
        "stream": True,
        "store": False,
        "prompt_cache_key": run.session,
        "max_output_tokens": 8192,
        "tools": [
            {
                "type": "function",
                "name": "bash",
                "description": "Run bash",
                "parameters": _BASH_SCHEMA,
                "strict": False,
            }
        ],
    }
    return "openai-responses", "/v1/responses", headers, body


def _chat_messages(run: _Run, system: str, *, mini: bool) -> list[dict]:
    messages: list[dict] = [{"role": "system", "content": system}]
    for turn in run.history:
        if turn["kind"] == "user":
            messages.append({"role": "user", "content": turn["text"]})
        elif turn["kind"] == "assistant":
            message = {k: v for k, v in turn["message"].items() if v is not None or k == "content"}
            messages.append(message)
        elif turn["kind"] == "result":
            call = turn["answers"]["message"]["tool_calls"][0]["id"]
            output = (
                f"<returncode>0</returncode>\n<output>\n{turn['output']}</output>" if mini else turn["output"]
            )
            messages.append({"role": "tool", "tool_call_id": call, "content": output})
    return messages


def _opencode(run: _Run, prompt: str) -> tuple[str, str, dict, dict]:
    headers = {
        "authorization": REDACTED,
        "content-type": "application/json",
        "user-agent": "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14",
        "x-session-id": "ses_" + run.session.replace("-", "")[:26],
        "x-session-affinity": "ses_" + run.session.replace("-", "")[:26],
    }
    body = {
        "model": "fake-model",
        "max_tokens": 32000,
        "messages": _chat_messages(run, "You are opencode, an interactive CLI tool.", mini=False),
        "tools": [
            {
                "type": "function",
                "function": {"name": "bash", "description": "Run bash", "parameters": _BASH_SCHEMA},
            }
        ],
        "tool_choice": "auto",
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    return "openai-chat", "/v1/chat/completions", headers, body


def _opencode_title(run: _Run, prompt: str) -> tuple[str, str, dict, dict]:
    _, path, headers, _ = _opencode(run, prompt)
    body = {
        "model": "fake-model",
        "max_tokens": 1500,
        "messages": [
            {"role": "system", "content": "You are a title generator. You output ONLY a thread title."},
            {"role": "user", "content": json.dumps(prompt)},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    return "openai-chat", path, headers, body


def _mini(run: _Run, prompt: str) -> tuple[str, str, dict, dict]:
    headers = {
        "accept": "application/json",
        "authorization": REDACTED,
        "content-type": "application/json",
        "user-agent": "OpenAI/Python 3.57.0",
        "x-stainless-arch": "x64",
        "x-stainless-async": "false",
        "x-stainless-lang": "python",
        "x-stainless-os": "Linux",
        "x-stainless-package-version": "3.57.0",
        "x-stainless-raw-response": "true",
        "x-stainless-retry-count": "0",
        "x-stainless-runtime": "CPython",
        "x-stainless-runtime-version": "3.11.7",
    }
    body = {
        "messages": _chat_messages(
            run, "You are a helpful assistant that can interact with a computer.", mini=True
        ),
        "model": "fake-model",
        "tools": [
            {
                "type": "function",
                "function": {"name": "bash", "description": "Run bash", "parameters": _BASH_SCHEMA},
            }
        ],
    }
    return "openai-chat", "/v1/chat/completions", headers, body


_REQUESTS = {
    "claude-code": _claude_code,
    "codex": _codex,
    "opencode": _opencode,
    "pi": _pi,
    "mini-swe-agent": _mini,
}


def run_transcript(
    agent: str,
    seed: int,
    steps: tuple[Step, ...] = DEFAULT_STEPS,
    *,
    prompt: str = "Create proof.txt",
    thinking: bool = False,
    reasoning: bool = False,
    fingerprint: str = "fp_2f6b9d1e07",
    title_first: bool = True,
    stop_after: int | None = None,
    fingerprint_from: tuple[int, str] | None = None,
) -> list[CallRecord]:
    """One run of `agent` through `steps`, with every random value drawn from `seed`."""
    run = _Run(agent, seed, thinking=thinking, reasoning=reasoning, fingerprint=fingerprint)
    if agent == "mini-swe-agent":
        prompt = f"<pr_description>\n{prompt}\n</pr_description>"
        steps = (*steps[:-1], Step("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", ""))
    run.history.append({"kind": "user", "text": prompt})
    records: list[CallRecord] = []
    speaker = "build" if agent == "opencode" else None
    calls: list[tuple[str | None, Step | None]] = [(speaker, s) for s in steps]
    if agent == "opencode":  # the title generator runs alongside the first agent turn
        calls.insert(0 if title_first else 1, ("title", None))
    agent_step = 0
    for index, (who, step) in enumerate(calls):
        if stop_after is not None and index >= stop_after:
            break
        if fingerprint_from is not None:  # the provider's backend changes from this agent step on
            changed = step is not None and agent_step >= fingerprint_from[0]
            run.fingerprint = fingerprint_from[1] if changed else fingerprint
        if step is None:  # the title call: its own request, a text answer, kept out of the agent's history
            saved = list(run.history)
            records.append(
                run.record(index, Step(None, text="Create proof.txt"), who, _opencode_title(run, prompt))
            )
            run.history = saved
            continue
        records.append(run.record(index, step, who, _REQUESTS[agent](run, prompt)))
        if step.command is not None:
            run.history.append({"kind": "result", "output": step.output, "answers": run.history[-1]})
        agent_step += 1
    return records


def varied(steps: tuple[Step, ...], variation: Variation) -> tuple[tuple[Step, ...], dict[str, Any]]:
    """Run B's steps and run options for a variation of run A's scenario."""
    s = list(steps)
    options: dict[str, Any] = {}
    if variation.kind == "response":
        old = s[variation.at]
        s[variation.at] = (
            replace(old, command=old.command + " -la") if old.command else replace(old, text=old.text + "!")
        )
    elif variation.kind == "tool_result":
        s[variation.at] = replace(s[variation.at], output=s[variation.at].output + "extra line\n")
    elif variation.kind == "start":
        options["prompt"] = "Create proof.txt please"
    elif variation.kind == "order":
        options["title_first"] = False
    elif variation.kind == "stop":
        options["stop_after"] = variation.at
    elif variation.kind == "fingerprint":
        old = s[variation.at]
        s[variation.at] = (
            replace(old, command=old.command + " -la") if old.command else replace(old, text=old.text + "!")
        )
        options["fingerprint_from"] = (variation.at, "fp_9a0c33e5b1")
    return tuple(s), options


def expected(
    agent: str, variation: Variation, steps: tuple[Step, ...] = DEFAULT_STEPS
) -> tuple[int | None, DivergenceClass | None]:
    """The ground truth the stand-in logs: the first call index at which the variation shows, and its class."""
    shift = 1 if agent == "opencode" else 0  # the title call comes first
    if variation.kind == "none":
        return None, None
    if variation.kind in ("response", "fingerprint"):
        return variation.at + shift, DivergenceClass.RESPONSE
    if variation.kind == "tool_result":
        return variation.at + 1 + shift, DivergenceClass.REQUEST
    if variation.kind == "start":
        return 0, DivergenceClass.REQUEST
    if variation.kind == "order":
        return 0, DivergenceClass.CALL_ORDER
    return variation.at, DivergenceClass.CALL_COUNT


def pair(
    agent: str, seed: int, variation: Variation = Variation(), **options: Any
) -> tuple[list[CallRecord], list[CallRecord]]:
    """Runs A and B of one task: the same scenario with independent random values, B varied as asked."""
    steps_b, options_b = varied(DEFAULT_STEPS, variation)
    a = run_transcript(agent, 2 * seed, **options)
    b = run_transcript(agent, 2 * seed + 1, steps_b, **{**options, **options_b})
    return a, b
