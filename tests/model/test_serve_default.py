"""`sbx model serve` with no --scenario plays the shipped scenario, and its help lists the shipped ones (issue
24, item 4: the README's `sbx model serve --port 8765` works as written)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request

import pytest

from orchestrator.cli import build_parser
from orchestrator.failures import ConfigError
from orchestrator.model import load_scenario
from orchestrator.paths import DEFAULT_SCENARIO, REPO_ROOT, scenario_path, shipped_scenarios
from tests.model.conftest import reap


def test_serve_with_no_scenario_plays_the_shipped_one() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "orchestrator", "model", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert f"stand-in model {DEFAULT_SCENARIO!r} serving on" in line, line + proc.stderr.read()  # type: ignore[union-attr]
        port = int(line.rsplit(":", 1)[1].split()[0])
        body = {"model": "sbx-standin", "messages": [{"role": "user", "content": "go"}],
                "tools": [{"type": "function", "function": {"name": "bash", "parameters": {
                    "type": "object", "properties": {"command": {"type": "string"}}}}}]}
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            answer = json.load(r)
        # the shipped scenario's first step, played through the tool the request advertised
        first = load_scenario(shipped_scenarios()[DEFAULT_SCENARIO]).steps[0].shell
        call = answer["choices"][0]["message"]["tool_calls"][0]["function"]
        assert json.loads(call["arguments"]) == {"command": first}
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 128 + signal.SIGTERM
    finally:
        reap(proc)


def test_the_help_lists_the_shipped_scenarios_and_a_wrong_name_names_them(capsys: pytest.CaptureFixture[str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert DEFAULT_SCENARIO in shipped_scenarios()
    monkeypatch.setenv("COLUMNS", "1000")  # argparse wraps at the terminal's width, breaking names at hyphens
    with pytest.raises(SystemExit):
        build_parser().parse_args(["model", "serve", "--help"])
    out = capsys.readouterr().out
    for name in shipped_scenarios():
        assert name in out
    with pytest.raises(ConfigError, match="shipped: flight-delays"):
        scenario_path("no-such-scenario")
    assert scenario_path(DEFAULT_SCENARIO).name == f"{DEFAULT_SCENARIO}.yaml"
