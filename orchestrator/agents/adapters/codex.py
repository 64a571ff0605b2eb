"""Codex CLI (`codex exec`), OpenAI's CLI: OpenAI Responses only, headless with `exec --json`.

Verified offline with 0.171.0 (agents-verified.md 3.2): a custom provider (not the built-in one, which
first tries WebSockets), `[features] plugins=false` (else it syncs plugins from GitHub) and
`[analytics] enabled=false`. Its JS wrapper needs Node at run time; the agent is a native musl binary.
Usage: `turn.completed` lines carry per-turn totals (no cost); the rollout file in CODEX_HOME/sessions has
one `token_count` event per model call.
"""

from __future__ import annotations

from collections.abc import Mapping

from orchestrator.agents.adapters import usage as u
from orchestrator.agents.adapters.protocol import Adapter, ConfigFile, ErrorPattern, NpmInstall, SelfReport

VERSION = "0.171.0"

COMMAND = ("codex", "exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "--json",
           "--model", "{{model}}", "--", "{{prompt}}")

CONFIG = ConfigFile(path="{{state}}/config.toml", fmt="toml", content={
    "model": "{{model}}",
    "review_model": "{{model}}",            # the only other model slot Codex has (its /review)
    "model_provider": "sbx",
    "approval_policy": "never",
    "sandbox_mode": "danger-full-access",   # the sbx container is the sandbox
    "check_for_update_on_startup": False,
    "analytics": {"enabled": False},
    "features": {"plugins": False},         # else: git ls-remote github.com/openai/plugins, api.github.com
    # else Codex 0.171 sends a provider-run `web_search` tool, which the gateway refuses as unmetered
    "web_search": "disabled",
    "model_providers": {"sbx": {
        "name": "sbx",
        "base_url": "{{base_url_v1}}",
        "env_key": "{{key_env}}",           # sent as Authorization: Bearer
        "wire_api": "responses",
    }},
})

ENV = {"CODEX_HOME": "{{state}}"}

ERRORS = (
    ErrorPattern(r"Model metadata for `[^`]*` not found", "config", "unknown model slug: generic prompt and tools"),
    ErrorPattern(r"wire_api = \"chat\" is no longer supported", "config", "Codex speaks Responses only"),
    ErrorPattern(r"stream disconnected before completion|error sending request", "endpoint",
                 "the model endpoint is unreachable or cut the stream"),
    ErrorPattern(r"exceeded retry limit|429 Too Many Requests|5\d\d [A-Z]", "endpoint", "the endpoint refused or failed"),
    ErrorPattern(r"401 Unauthorized", "auth", "the endpoint refused the key"),
)


def parse(stdout: bytes, files: Mapping[str, bytes]) -> SelfReport:
    tally = u.Tally()
    totals = {"input_tokens": 0, "cached_input_tokens": 0, "cache_write_input_tokens": 0, "output_tokens": 0,
              "reasoning_output_tokens": 0}
    turns = 0
    for event in u.json_lines(stdout, tally):
        if event.get("type") == "turn.completed" and isinstance(event.get("usage"), dict):
            turns += 1
            for key in totals:
                totals[key] += u.count(event, "usage", key, tally=tally)
    calls = _rollout_calls(files, tally)
    return SelfReport(
        input_tokens=totals["input_tokens"], cached_input_tokens=totals["cached_input_tokens"],
        cache_write_tokens=totals["cache_write_input_tokens"], output_tokens=totals["output_tokens"],
        reasoning_tokens=totals["reasoning_output_tokens"], cost_usd=None, calls=calls,
        source="stdout:turn.completed" + ("+rollout" if calls is not None else ""), complete=turns > 0,
        skipped=tally.skipped,
    )


def _rollout_calls(files: Mapping[str, bytes], tally: u.Tally) -> int | None:
    """Model calls in the rollout files: `token_count` events whose running total moved."""
    found = None
    for name in sorted(files)[:64]:
        if "rollout-" not in name:
            continue
        found = found or 0
        last = None
        for record in u.json_lines(files[name], tally):
            payload = record.get("payload")
            if record.get("type") != "event_msg" or u.get(payload, "type") != "token_count":
                continue
            total = u.get(payload, "info", "total_token_usage")
            if isinstance(total, dict):
                key = tuple(u.count(total, k) for k in ("input_tokens", "output_tokens", "cached_input_tokens"))
                if key != last:
                    found += 1
                    last = key
    return found


ADAPTER = Adapter(
    name="codex",
    version=VERSION,
    install=NpmInstall(
        # the platform package is published as a version of @openai/codex and installed under its alias
        dependencies={"@openai/codex": VERSION, "@openai/codex-linux-x64": f"npm:@openai/codex@{VERSION}-linux-x64"},
        bins={"codex": "codex"},
        node_at_runtime=True,  # bin/codex.js finds and spawns the native binary
    ),
    wire_apis=("openai-responses",),
    command=COMMAND,
    env=ENV,
    env_by_api={},
    state_name=".codex",
    files=(CONFIG,),
    errors=ERRORS,
    reports=("sessions/*/*/*/rollout-*.jsonl",),
    parser=parse,
    version_probe=(("codex", "--version"), r"^codex-cli (\S+)"),
)
