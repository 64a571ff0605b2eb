"""Claude Code (`claude`), Anthropic's CLI: Anthropic Messages, headless with `-p` and stream-json.

Verified offline with 2.1.332 (../shared/research/agents-verified.md 3.1): with
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC it makes no call but POST /v1/messages; CLAUDE_CONFIG_DIR moves
all its state. Usage: the final `result` line has the session's totals and a client-side cost estimate
from its bundled price list; `assistant` lines repeat the message_start usage, so they only count calls.
"""

from __future__ import annotations

from collections.abc import Mapping

from orchestrator.agents.adapters import usage as u
from orchestrator.agents.adapters.protocol import Adapter, ErrorPattern, NpmInstall, SelfReport

VERSION = "2.1.332"

COMMAND = ("claude", "-p", "{{prompt}}", "--output-format", "stream-json", "--verbose",
           "--dangerously-skip-permissions", "--model", "{{model}}")

ENV = {
    "ANTHROPIC_BASE_URL": "{{base_url}}",          # no /v1: the SDK adds it
    "ANTHROPIC_API_KEY": "{{api_key}}",            # sent as x-api-key
    "CLAUDE_CONFIG_DIR": "{{state}}",              # ~/.claude.json and ~/.claude/* move here
    # every model slot, background and sub-agent ones included, is the pairing's model
    "ANTHROPIC_MODEL": "{{model}}",
    "ANTHROPIC_DEFAULT_OPUS_MODEL": "{{model}}",
    "ANTHROPIC_DEFAULT_SONNET_MODEL": "{{model}}",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL": "{{model}}",
    "ANTHROPIC_SMALL_FAST_MODEL": "{{model}}",
    "CLAUDE_CODE_SUBAGENT_MODEL": "{{model}}",
    # no telemetry, error reports, auto-update or /api/hello probe (the first implies the other three)
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
}

ERRORS = (
    ErrorPattern(r"cannot be used with root/sudo privileges", "config", "skip-permissions refused for root"),
    ErrorPattern(r"Invalid API key|authentication_error", "auth", "the endpoint refused the key"),
    ErrorPattern(r"API Error: Connection error|ECONNREFUSED", "endpoint", "the model endpoint is unreachable"),
    ErrorPattern(r"rate_limit_error|overloaded_error|API Error: 5\d\d", "endpoint", "the endpoint refused or failed"),
    ErrorPattern(r"Credit balance is too low|budget", "limit", "a spending limit was hit"),
)


def parse(stdout: bytes, files: Mapping[str, bytes]) -> SelfReport:
    tally = u.Tally()
    result = None
    message_ids: set[str] = set()
    for event in u.json_lines(stdout, tally):
        kind = event.get("type")
        if kind == "result":
            result = event
        elif kind == "assistant":
            mid = u.text(event, "message", "id")
            if mid and len(message_ids) < 100_000:
                message_ids.add(mid)
    if result is None:
        return SelfReport(source="stdout", calls=len(message_ids) or None, skipped=tally.skipped)
    usage = result.get("usage")
    uncached = u.count(usage, "input_tokens", tally=tally)
    read = u.count(usage, "cache_read_input_tokens", tally=tally)
    write = u.count(usage, "cache_creation_input_tokens", tally=tally)
    turns = u.count(result, "num_turns", tally=tally)
    return SelfReport(
        input_tokens=uncached + read + write, cached_input_tokens=read, cache_write_tokens=write,
        output_tokens=u.count(usage, "output_tokens", tally=tally),
        reasoning_tokens=u.count(usage, "output_tokens_details", "thinking_tokens", tally=tally),
        cost_usd=u.cost(result, "total_cost_usd", tally=tally),
        calls=len(message_ids) or turns or None, source="stdout:result", complete=True, skipped=tally.skipped,
    )


ADAPTER = Adapter(
    name="claude-code",
    version=VERSION,
    install=NpmInstall(
        dependencies={"@anthropic-ai/claude-code": VERSION, "@anthropic-ai/claude-code-linux-x64": VERSION},
        bins={"claude": "claude"},
        node_at_runtime=False,  # the postinstall puts the native binary in place of the JS stub
    ),
    wire_apis=("anthropic",),
    command=COMMAND,
    env=ENV,
    env_by_api={},
    state_name=".claude",
    files=(),
    errors=ERRORS,
    reports=(),
    parser=parse,
    version_probe=(("claude", "--version"), r"^(\S+) \(Claude Code\)"),
)
