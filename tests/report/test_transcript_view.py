"""A run's model calls for people (report/transcript.py and `sbx transcript`), from real transcripts: requests
shaped like the CLIs' go through the gateway to the stand-in in each wire API, streamed and not."""

from __future__ import annotations

import datetime as dt
import gzip
import http.client
import json
import socket
import tempfile
from pathlib import Path

import pytest

from orchestrator.artifacts import ArtifactStore
from orchestrator.cli import main
from orchestrator.diverge.reader import read_transcript
from orchestrator.gateway.limits import ModelLimits
from orchestrator.ledger import Ledger, ModelUsage
from orchestrator.model.scenario import Scenario, Step
from orchestrator.report.transcript import call_views, html_page, text_lines
from tests.run.standin_setup import ENDPOINT_OF_API, MODEL, standin_gateway

SCENARIO = Scenario(name="view", steps=(Step(say="Looking first.", shell="ls -la && echo '<b>hi</b>'"),
                                        Step(finish="All done <script>alert(1)</script>")))
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


def _tools(api: str) -> list[dict]:
    if api == "anthropic":
        return [{"name": "Bash", "description": "run", "input_schema": SCHEMA}]
    if api == "openai-chat":
        return [{"type": "function", "function": {"name": "bash", "parameters": SCHEMA}}]
    return [{"type": "function", "name": "shell", "parameters": SCHEMA}]


def _bodies(api: str, stream: bool) -> list[dict]:
    """The first call, and the second carrying the first answer's tool call and its result."""
    if api == "anthropic":
        first = {"model": MODEL, "max_tokens": 100, "system": "You are careful.", "tools": _tools(api),
                 "messages": [{"role": "user", "content": "Read program.md"}]}
        second = {**first, "messages": [*first["messages"],
                  {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                                     "input": {"command": "ls -la"}}]},
                  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                "content": "train.py\nprogram.md"}]}]}
    elif api == "openai-chat":
        first = {"model": MODEL, "tools": _tools(api), "messages": [{"role": "system", "content": "You are careful."},
                                                                    {"role": "user", "content": "Read program.md"}]}
        second = {**first, "messages": [*first["messages"],
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls -la\"}"}}]},
                  {"role": "tool", "tool_call_id": "call_1", "content": "train.py\nprogram.md"}]}
        if stream:
            first["stream_options"] = second["stream_options"] = {"include_usage": True}
    else:
        first = {"model": MODEL, "instructions": "You are careful.", "tools": _tools(api), "input": "Read program.md"}
        second = {**first, "input": [{"type": "message", "role": "user", "content": "Read program.md"},
                                     {"type": "function_call", "call_id": "c1", "name": "shell",
                                      "arguments": "{\"command\":\"ls -la\"}"},
                                     {"type": "function_call_output", "call_id": "c1", "output": "train.py\nprogram.md"}]}
    return [{**b, "stream": stream} for b in (first, second)]


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("gateway", timeout=30)
        self.unix_path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.unix_path)


def _record(tmp_path: Path, api: str, stream: bool) -> Path:
    path = {"anthropic": "/v1/messages", "openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses"}[api]
    transcript = tmp_path / f"{api}-{stream}.jsonl.gz"
    # the socket in a short folder: a unix socket's path has 107 bytes at most, fewer than a parallel
    # worker's tmp_path for this test's longer names leaves
    with standin_gateway(tmp_path / f"model-{api}-{stream}", SCENARIO) as setup, \
            tempfile.TemporaryDirectory(prefix="sbx-view-") as sockets:
        sock = setup.host.open_run("view", ENDPOINT_OF_API[api], MODEL, ModelLimits(), transcript,
                                   socket_path=Path(sockets) / "model.sock", seed=0,
                                   run_date=dt.date.today(), on_event=lambda *_: None)
        for body in _bodies(api, stream):
            conn = _UnixHTTP(sock)
            conn.request("POST", path, body=json.dumps(body), headers={"content-type": "application/json",
                                                                       "anthropic-version": "2023-06-01"})
            assert conn.getresponse().read() and True
            conn.close()
        totals = setup.host.close_run("view")
    assert totals.ok == 2
    return transcript


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", ["anthropic", "openai-chat", "openai-responses"])
def test_each_call_shows_what_was_new_and_what_came_back(tmp_path: Path, api: str, stream: bool) -> None:
    calls = read_transcript(_record(tmp_path, api, stream)).calls
    first, second = call_views(calls)
    tool = {"anthropic": "Bash", "openai-chat": "bash", "openai-responses": "shell"}[api]
    # the first call: the system prompt, the tools offered and the user's message; the answer: text + tool call
    assert [(p.role, p.kind) for p in first.sent] == [("system", "text"), ("tools", "tools"), ("user", "text")]
    assert first.sent[1].text == tool and first.sent[2].text == "Read program.md"
    said = [(p.kind, p.name) for p in first.received]
    assert said == [("text", None), ("tool_call", tool)], first.received
    assert first.received[0].text == "Looking first."
    assert json.loads(first.received[1].text) == {"command": "ls -la && echo '<b>hi</b>'"}
    # the second call shows only what is new (the tool call and its result), then the final answer
    assert [(p.role, p.kind) for p in second.sent][-1] == ("tool", "tool_result")
    assert second.sent[-1].text == "train.py\nprogram.md"
    assert [p.text for p in second.received if p.kind == "text"] == ["All done <script>alert(1)</script>"]
    assert first.usage == calls[0].usage.model_dump() and first.stream is stream and first.model == MODEL
    lines = text_lines([first, second])
    assert len(lines) == 3 and f"{tool}: " in lines[1] and "All done" in lines[2]
    page = html_page([first, second], title="t <x>", summary={"run": "r-1"})
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;hi&lt;/b&gt;" in page and 'id="call-1"' in page and "t &lt;x&gt;" in page


def test_sbx_transcript_prints_the_calls_and_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    transcript = _record(tmp_path, "anthropic", True)
    home = tmp_path / "home"
    sha = ArtifactStore(home / "artifacts").put_file(transcript)
    with Ledger(home / "ledger.sqlite") as ledger:
        run_id = ledger.new_run(task="flight-delays", agent="claude-code", budget_name="smoke", model=MODEL)
        ledger.usage.save(run_id, ModelUsage(endpoint="standin-anthropic", api="anthropic", model=MODEL,
                                                   agent_version="2.1.332", calls=2, ok=2, transcript_sha256=sha,
                                                   cost_usd=0.01, closed=True))
        bare = ledger.new_run(task="flight-delays", agent="noop", budget_name="smoke")
    page = tmp_path / "out" / "calls.html"
    assert main(["--home", str(home), "transcript", run_id[-6:], "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "claude-code 2.1.332" in out and "standin-anthropic (anthropic)" in out
    assert out.count(" ok ") == 2 and "Bash: " in out and f"html: {page}" in out
    assert page.read_text().count('<section class="call">') == 2
    assert main(["--home", str(home), "transcript", run_id, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["index"] for c in doc["calls"]] == [0, 1] and doc["summary"]["transcript"] == sha
    assert gzip.decompress(transcript.read_bytes()).count(b"\n") == 2
    assert main(["--home", str(home), "transcript", bare]) == 2
    assert "has no model transcript" in capsys.readouterr().err


def test_a_line_for_the_terminal_carries_no_control_characters() -> None:
    from orchestrator.report.transcript import CallView, Part

    view = CallView(index=0, path="/v1/messages", status=200, outcome="ok", stream=False, started_at=0.0,
                    ttfb_s=0.1, total_s=0.2, usage=None, cost_usd=None, error=None, model=None,
                    received=[Part("assistant", "text", "clear \x1b[2J\x1b]0;pwned\x07 screen\r\nnext")])
    line = text_lines([view])[1]
    assert "\x1b" not in line and "\x07" not in line and "\r" not in line
    assert line.endswith("clear \\x1b[2J\\x1b]0;pwned\\x07 screen next")


def test_a_streamed_tool_call_with_a_hostile_index_is_read_as_call_zero() -> None:
    """The model's stream names each tool call's index; one that is not an int must not break the view
    (a string beside ints would not sort)."""
    import json

    from orchestrator.report.transcript import _chat_stream

    chunks = [{"choices": [{"delta": {"tool_calls": [{"index": 1, "function": {"name": "b", "arguments": "{}"}}]}}]},
              {"choices": [{"delta": {"tool_calls": [{"index": "0; drop", "function": {"name": "a",
                                                                                     "arguments": "[1]"}}]}}]}]
    parts = _chat_stream((None, json.dumps(c)) for c in chunks)
    assert [(p.kind, p.name, p.text) for p in parts] == [("tool_call", "a", "[1]"), ("tool_call", "b", "{}")]
