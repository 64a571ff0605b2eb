"""The adapter interface: every adapter fills its slots, pins every model slot, relocates its state, and
its launch script writes the config files and runs the CLI where and how it should."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from orchestrator.agents.adapters import DUMMY_KEY, PROMPT, ModelTarget, adapter_names, get_adapter
from orchestrator.agents.adapters.protocol import KEY_ENV, WIRE_APIS, Adapter, fill, toml_dumps
from orchestrator.failures import ConfigError
from orchestrator.images.agents.lock import read_lock

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "images" / "agents" / "agents.lock"
TARGET = "http://127.0.0.1:41001"
MODEL = "pairing-model-7"


def _launches(name: str):
    adapter = get_adapter(name)
    for api in adapter.wire_apis:
        yield api, adapter.launch(ModelTarget(TARGET, MODEL, api))


def test_the_five_clis_have_adapters_and_lock_lines_that_agree() -> None:
    assert adapter_names() == ["claude-code", "codex", "mini-swe-agent", "opencode", "pi"]
    lock = read_lock(LOCK)
    for name in adapter_names():
        adapter = get_adapter(name)
        assert adapter.name == name
        assert lock[name].version == adapter.version, name
        assert lock[name].digest and lock[name].before, name


def test_unknown_agent_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="known: claude-code, codex, mini-swe-agent, opencode, pi"):
        get_adapter("claude")


@pytest.mark.parametrize("name", ["claude-code", "codex", "mini-swe-agent", "opencode", "pi"])
def test_launch_fills_every_slot_and_pins_the_model_everywhere(name: str) -> None:
    adapter = get_adapter(name)
    assert adapter.wire_apis[0] in WIRE_APIS
    for api, launch in _launches(name):
        everything = json.dumps([launch.argv, dict(launch.env), dict(launch.files)])
        assert "{{" not in everything and "}}" not in everything.replace("}}}", "")
        assert launch.argv[-1] == PROMPT or PROMPT in launch.argv, "the reference prompt is passed"
        assert MODEL in everything and TARGET in everything
        # no model name other than the pairing's: every slot (small/background/sub-agent) is pinned
        for key, value in launch.env.items():
            if key.endswith("_MODEL"):
                assert value == MODEL, (api, key, value)
        # the dummy key only, never anything that looks like a real provider key
        assert launch.env[KEY_ENV] == DUMMY_KEY
        assert not re.search(r"sk-(ant|proj)-|sk-[A-Za-z0-9]{20}", everything)
        # state lives under the writable home, config files inside the state folder
        assert launch.state.startswith("/home/agent/") and launch.cwd == "/workspace"
        assert all(path.startswith(launch.state + "/") for path in launch.files)
        assert launch.env["HOME"] == "/home/agent" and launch.env["PWD"] == "/workspace"


def test_config_files_parse_in_their_format_and_name_the_target() -> None:
    codex = dict(get_adapter("codex").launch(ModelTarget(TARGET, MODEL, "openai-responses")).files)
    cfg = tomllib.loads(codex["/home/agent/.codex/config.toml"])
    assert cfg["model"] == MODEL and cfg["model_provider"] == "sbx"
    assert cfg["model_providers"]["sbx"] == {"name": "sbx", "base_url": f"{TARGET}/v1", "env_key": KEY_ENV,
                                             "wire_api": "responses"}
    assert cfg["features"]["plugins"] is False and cfg["analytics"]["enabled"] is False

    for api, npm in (("openai-chat", "@ai-sdk/openai-compatible"), ("anthropic", "@ai-sdk/anthropic"),
                     ("openai-responses", "@ai-sdk/openai")):
        files = get_adapter("opencode").launch(ModelTarget(TARGET, MODEL, api)).files
        oc = json.loads(files["/home/agent/.opencode/opencode.json"])
        assert oc["model"] == oc["small_model"] == f"sbx/{MODEL}"
        assert oc["provider"]["sbx"]["npm"] == npm
        assert oc["provider"]["sbx"]["options"] == {"baseURL": f"{TARGET}/v1", "apiKey": "{env:SBX_MODEL_API_KEY}"}
        assert list(oc["provider"]["sbx"]["models"]) == [MODEL]

    for api, kind, base in (("openai-chat", "openai-completions", f"{TARGET}/v1"),
                            ("anthropic", "anthropic-messages", TARGET),
                            ("openai-responses", "openai-responses", f"{TARGET}/v1")):
        files = get_adapter("pi").launch(ModelTarget(TARGET, MODEL, api)).files
        prov = json.loads(files["/home/agent/.pi/agent/models.json"])["providers"]["sbx"]
        assert (prov["api"], prov["baseUrl"], prov["apiKey"]) == (kind, base, "$SBX_MODEL_API_KEY")
        assert [m["id"] for m in prov["models"]] == [MODEL]


def test_a_cli_refuses_a_wire_api_it_does_not_speak() -> None:
    with pytest.raises(ConfigError, match="codex speaks openai-responses, not openai-chat"):
        get_adapter("codex").launch(ModelTarget(TARGET, MODEL, "openai-chat"))
    with pytest.raises(ConfigError, match="no /v1"):
        ModelTarget(f"{TARGET}/v1", MODEL, "anthropic")
    with pytest.raises(ConfigError, match="model"):
        ModelTarget(TARGET, "bad model; rm -rf /", "anthropic")


def test_unknown_slots_are_refused_when_an_adapter_is_built() -> None:
    with pytest.raises(ValueError, match=r"unknown slots \['modle'\]"):
        replace(get_adapter("claude-code"), env={"X": "{{modle}}"})


def test_toml_writer_round_trips_through_tomllib() -> None:
    table = {"a": "x \"quoted\" \\ back \u00e9 \n", "b": True, "n": 3, "f": 0.5, "list": ["p", "q"],
             "t": {"k": "v", "deeper": {"z": False}}, "u": {"only": {"leaf": 1}}, "weird key": "w"}
    assert tomllib.loads(toml_dumps(table)) == table


def test_fill_is_strict_and_recursive() -> None:
    assert fill({"{{a}}": ["{{a}}-{{b}}", 3, {"x": "{env:{{b}}}"}]}, {"a": "1", "b": "K"}) == \
        {"1": ["1-K", 3, {"x": "{env:K}"}]}
    with pytest.raises(KeyError):
        fill("{{missing}}", {})


@pytest.mark.parametrize("name", ["codex", "opencode", "pi"])
def test_launch_script_writes_private_config_and_execs_in_the_workspace(name: str, tmp_path: Path) -> None:
    """The bash -c argv, run for real: files land with mode 0600, exact bytes, cwd and $PWD are the
    workspace, stdin is /dev/null, and the argv reaches the program unchanged."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    home.mkdir()
    adapter: Adapter = get_adapter(name)
    probe = ("python3", "-c", "import json,os,sys; print(json.dumps([os.getcwd(), os.environ.get('PWD'), "
             "sys.argv[1:], os.stat(0).st_rdev == os.stat('/dev/null').st_rdev]))", "{{prompt}}", "{{model}}")
    launch = replace(adapter, command=probe).launch(ModelTarget(TARGET, MODEL, adapter.wire_apis[0]),
                                                    workspace=str(ws), home=str(home),
                                                    prompt="it's \"quoted\" $HOME `x`")
    out = subprocess.run(launch.shell(), env={**launch.env, "PATH": os.environ["PATH"]}, capture_output=True,
                         text=True, check=True, cwd=tmp_path)
    cwd, pwd, argv, stdin_null = json.loads(out.stdout)
    assert cwd == pwd == str(ws) and stdin_null
    assert argv == ["it's \"quoted\" $HOME `x`", MODEL]
    for path, text in launch.files.items():
        assert Path(path).read_text() == text
        assert stat.S_IMODE(Path(path).stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(launch.state).stat().st_mode) == 0o700


def test_mini_swe_agent_config_is_on_the_command_line() -> None:
    launch = get_adapter("mini-swe-agent").launch(ModelTarget(TARGET, MODEL, "openai-chat"))
    argv = list(launch.argv)
    assert argv[argv.index("-m") + 1] == f"openai/{MODEL}"
    assert f"model.model_kwargs.api_base={TARGET}/v1" in argv
    assert argv[argv.index("-o") + 1] == f"{launch.state}/traj.json"
    assert launch.env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert launch.env["MSWEA_GLOBAL_CONFIG_DIR"] == launch.state
    assert yaml.safe_load("a: 1") == {"a": 1}  # yaml renders mini's optional config files


def test_launch_script_keeps_the_tail_of_stdout_apart_and_the_clis_exit_status(tmp_path: Path) -> None:
    """keep_stdout: stdout reaches the caller (on stderr, beside the CLI's own stderr), its last bytes are
    copied unmixed into the state folder, and the script exits with the CLI's status, not tee's or tail's."""
    from orchestrator.agents.adapters.protocol import STDOUT_COPY

    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    home.mkdir()
    noisy = ("python3", "-c", "import sys\nfor i in range(2000): print(f'{{\"line\": {i}}}'); "
             "sys.stderr.write(f'err {i}\\n')\nraise SystemExit(7)")
    adapter = replace(get_adapter("codex"), command=noisy)
    launch = adapter.launch(ModelTarget(TARGET, MODEL, "openai-responses"), workspace=str(ws), home=str(home))
    out = subprocess.run(launch.shell(keep_stdout=1000), env={**launch.env, "PATH": os.environ["PATH"]},
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 7
    assert out.stdout == ""
    assert out.stderr.count('{"line": ') == 2000 and out.stderr.count("err ") == 2000
    kept = (Path(launch.state) / STDOUT_COPY).read_bytes()
    assert len(kept) == 1000 and kept.endswith(b'{"line": 1999}\n') and b"err" not in kept
    assert stat.S_IMODE((Path(launch.state) / STDOUT_COPY).stat().st_mode) == 0o600
