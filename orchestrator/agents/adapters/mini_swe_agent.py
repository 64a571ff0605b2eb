"""mini-swe-agent (`mini`), Python: OpenAI Chat Completions through litellm, not streaming.

Verified offline with 2.4.6 (agents-verified.md 3.5): LITELLM_LOCAL_MODEL_COST_MAP stops litellm fetching
its price map from GitHub at import; MSWEA_GLOBAL_CONFIG_DIR moves the folder it creates at import. In
2.4.6 it calls tools (one `bash` tool) and stops only when the model runs
`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`. It lives in its own venv (its pins clash with the task's
stack, e.g. python-dateutil), whose site-packages carries the CPU-meter gate like every interpreter in
the sandbox. Usage: traj.json, the raw usage of every response and `info.model_stats`.
"""

from __future__ import annotations

from collections.abc import Mapping

from orchestrator.agents.adapters import usage as u
from orchestrator.agents.adapters.protocol import Adapter, ErrorPattern, PipInstall, SelfReport

VERSION = "2.4.6"
TRAJECTORY = "traj.json"
MAX_MESSAGES = 100_000

COMMAND = ("mini", "--yolo", "--exit-immediately", "--cost-limit", "0", "-m", "openai/{{model}}", "-c", "mini.yaml",
           "-c", "model.model_kwargs.api_base={{base_url_v1}}", "-o", "{{state}}/" + TRAJECTORY, "-t", "{{prompt}}")

ENV = {
    "OPENAI_API_KEY": "{{api_key}}",
    "MSWEA_CONFIGURED": "true",                   # no first-run setup wizard
    "MSWEA_COST_TRACKING": "ignore_errors",       # litellm has no price for unknown models
    "MSWEA_GLOBAL_CONFIG_DIR": "{{state}}",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",       # else: raw.githubusercontent.com at import
}

ERRORS = (
    ErrorPattern(r"Read-only file system: '[^']*\.config'", "config", "MSWEA_GLOBAL_CONFIG_DIR not writable"),
    ErrorPattern(r"APIConnectionError|Connection error", "endpoint", "the model endpoint is unreachable"),
    ErrorPattern(r"RateLimitError|InternalServerError|ServiceUnavailableError", "endpoint",
                 "the endpoint refused or failed"),
    ErrorPattern(r"AuthenticationError", "auth", "the endpoint refused the key"),
    ErrorPattern(r"refused by the CPU meter", "limit", "the CPU meter refused the Python process"),
)


def parse(stdout: bytes, files: Mapping[str, bytes]) -> SelfReport:
    tally = u.Tally()
    raw = next((data for name, data in files.items() if name.rsplit("/", 1)[-1] == TRAJECTORY), None)
    traj = u.loads(raw) if isinstance(raw, bytes) else None
    if traj is None:
        return SelfReport(source="file:" + TRAJECTORY, skipped=tally.skipped + (raw is not None))
    messages = traj.get("messages")
    t = {"input": 0, "cached": 0, "write": 0, "output": 0, "reasoning": 0}
    responses = 0
    for msg in messages[:MAX_MESSAGES] if isinstance(messages, list) else ():
        usage = u.get(msg, "extra", "response", "usage")
        if not isinstance(usage, dict):
            continue
        responses += 1
        t["input"] += u.count(usage, "prompt_tokens", tally=tally)
        t["cached"] += u.count(usage, "prompt_tokens_details", "cached_tokens", tally=tally)
        t["write"] += u.count(usage, "prompt_tokens_details", "cache_write_tokens", tally=tally)
        t["output"] += u.count(usage, "completion_tokens", tally=tally)
        t["reasoning"] += u.count(usage, "completion_tokens_details", "reasoning_tokens", tally=tally)
    stats = u.get(traj, "info", "model_stats")
    api_calls = u.count(stats, "api_calls", tally=tally) if u.get(stats, "api_calls") is not None else None
    return SelfReport(
        input_tokens=t["input"], cached_input_tokens=t["cached"], cache_write_tokens=t["write"],
        output_tokens=t["output"], reasoning_tokens=t["reasoning"], cost_usd=u.cost(stats, "instance_cost", tally=tally),
        calls=api_calls if api_calls is not None else responses, source="file:" + TRAJECTORY,
        complete=u.text(traj, "info", "exit_status") is not None, skipped=tally.skipped,
    )


ADAPTER = Adapter(
    name="mini-swe-agent",
    version=VERSION,
    install=PipInstall(requirements=(f"mini-swe-agent=={VERSION}",), bins=("mini",)),
    wire_apis=("openai-chat",),
    command=COMMAND,
    env=ENV,
    env_by_api={},
    state_name=".config/mini-swe-agent",
    files=(),
    errors=ERRORS,
    reports=(TRAJECTORY,),
    parser=parse,
    version_probe=(("python", "-c", "import minisweagent; print(minisweagent.__version__)"), r"^(\S+)$"),
)
