"""`sbx show`: the record of one run, by full id or unique prefix, for people and as one JSON object."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.ledger import Ledger, RunState
from tests.ledger.ledger_helpers import drive, plan


def _two_runs(path: Path) -> tuple[str, str]:
    with Ledger(path) as led:
        a, b = plan(led, agent="noop"), plan(led, agent="hpo")
        drive(led, a, RunState.RUNNING)
        led.add_event(a, "gate.refused", {"pid": 9})
        led.add_experiment(a, status="ok", eval_score=0.7, commit_sha="0123456789abcdef")
        led.add_experiment(a, status="refused")
        led.advance(a, RunState.FAILED, failure_class="agent", reason="exit 1")
    return a, b


def test_show_json_prints_exactly_one_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = _two_runs(tmp_path / "l.sqlite")
    assert main(["show", a, "--json", "--ledger", str(tmp_path / "l.sqlite")]) == 0
    out = capsys.readouterr().out
    record = json.loads(out)  # fails on anything but one JSON document
    assert isinstance(record, dict) and record["run_id"] == a
    assert record["status"] == "failed" and record["failure_class"] == "agent"
    assert [e["kind"] for e in record["events"]].count("gate.refused") == 1
    assert [x["status"] for x in record["experiments"]] == ["ok", "refused"]


def test_show_finds_a_run_by_a_unique_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _two_runs(tmp_path / "l.sqlite")
    tail = a.rsplit("-", 1)[1]
    assert main(["show", tail, "--json", "--ledger", str(tmp_path / "l.sqlite")]) == 0
    assert json.loads(capsys.readouterr().out)["run_id"] == a
    assert main(["show", b[:-1], "--json", "--ledger", str(tmp_path / "l.sqlite")]) == 0
    assert json.loads(capsys.readouterr().out)["run_id"] == b


def test_show_prints_a_readable_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = _two_runs(tmp_path / "l.sqlite")
    assert main(["show", a, "--ledger", str(tmp_path / "l.sqlite")]) == 0
    out = capsys.readouterr().out
    assert a in out
    assert "failed  agent: exit 1" in out
    assert "running -> failed  agent  exit 1" in out
    assert "gate.refused" in out and '{"pid": 9}' in out
    assert "experiments (2)" in out and "0.7000" in out and "0123456789ab" in out


@pytest.mark.parametrize(
    ("run", "message"),
    [("r-nope", "sbx: error: no run 'r-nope'"), ("r-", "sbx: error: run id prefix 'r-' matches 2 runs")],
)
def test_show_of_an_unknown_or_ambiguous_run_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], run: str, message: str
) -> None:
    _two_runs(tmp_path / "l.sqlite")
    assert main(["show", run, "--ledger", str(tmp_path / "l.sqlite")]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines()[-1].startswith(message) and captured.out == ""


def test_show_without_a_ledger_does_not_create_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "r-x", "--ledger", str(tmp_path / "missing.sqlite")]) == 2
    assert "no ledger at" in capsys.readouterr().err
    assert not (tmp_path / "missing.sqlite").exists()


def test_show_uses_the_ledger_under_sbx_home_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SBX_HOME", str(tmp_path))
    a, _ = _two_runs(tmp_path / "ledger.sqlite")
    assert main(["show", a, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["run_id"] == a


def test_the_sbx_command_keeps_logs_off_stdout(tmp_path: Path) -> None:
    a, _ = _two_runs(tmp_path / "l.sqlite")
    env = {**os.environ, "SBX_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator", "--log-level", "debug", "show", a[:-1], "--json",
         "--ledger", str(tmp_path / "l.sqlite")],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["run_id"] == a


def test_show_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "show" in capsys.readouterr().out


def test_show_escapes_what_an_agent_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A note, an event detail and a reason with escape sequences and newlines: nothing reaches the terminal
    that moves the cursor, clears the screen or starts a line of its own (a fake holdout or compliance line)."""
    fake = "x\x1b[2J\x1b[H\rholdout      AUC 0.9990\ncompliance   eval_labels_in_fit clear\u202e\x9b"
    with Ledger(tmp_path / "l.sqlite") as led:
        a = plan(led)
        drive(led, a, RunState.RUNNING)
        led.add_event(a, "agent_note", {"text": fake})
        led.add_experiment(a, status="ok", note=fake)
        led.advance(a, RunState.FAILED, failure_class="agent", reason=fake)
    assert main(["show", a, "--ledger", str(tmp_path / "l.sqlite")]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x1b\r\u202e\x9b")
    assert not any(line.startswith(("holdout", "compliance")) for line in out.splitlines())
    # shown, escaped: the status line, the transition event and the experiment; the event's detail as JSON
    assert out.count("\\x1b[2J") == 3 and out.count("\\u001b[2J") == 1


def test_log_lines_on_a_terminal_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from orchestrator import log

    log.configure(json=False)
    try:
        logger = log.get_logger("t")
        logger.warning("run.failed", reason="a\x1b[31mred\nholdout 0.99")
        logger.warning("agent said \x1b[2J")
        try:
            raise ValueError("\x1b]0;title\x07 from the agent")
        except ValueError:
            logger.warning("run.sandbox_error", exc_info=True)
    finally:
        log.configure()
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert "holdout 0.99" in err and "agent said \\x1b[2J" in err and "ValueError: \\x1b]0;title\\x07" in err
    assert not any(line.startswith("holdout") for line in err.splitlines())


def test_every_logged_value_on_a_terminal_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    """Not only the message: a bare value (no space, so the console renderer would print it unquoted), a
    spaced one, a value inside a list, an object whose repr is not printable, and a key, each from an agent."""
    from orchestrator import log

    class Odd:
        def __repr__(self) -> str:
            return "Odd(\x1b[H)"

    pwn = "\x1b[2J\x1b]0;pwned\x07"
    log.configure(json=False)
    try:
        log.get_logger("t").warning("run.failed", error=pwn, task=f"task {pwn}", names=[pwn], odd=Odd(),
                                    n=3, plain="ok", **{f"k{pwn}": 1})
    finally:
        log.configure()
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert not any(ch in err for ch in "\x1b\x07\r")
    assert "error='\\x1b[2J\\x1b]0;pwned\\x07'" in err and "task='task \\x1b[2J" in err
    assert "names=['\\x1b[2J" in err and "odd=Odd(\\x1b[H)" in err and "k\\x1b[2J" in err
    assert "n=3" in err and "plain=ok" in err
