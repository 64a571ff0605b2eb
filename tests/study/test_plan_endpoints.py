"""`sbx study plan` refuses a study whose model endpoint takes no connection, naming the endpoint and its
address (issue 24, item 4: a stopped stand-in is found at plan, not by every run failing one by one)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.failures import EndpointUnreachable
from orchestrator.gateway.reach import check_reachable
from orchestrator.specs.endpoints import Endpoint
from tests.run.standin_setup import KEY_ENV, MODEL, write_model_files


def _dead_port() -> int:
    """A port nobody listens on: bound, then closed (no listen), so a connection there is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _study(folder: Path) -> Path:
    spec = folder / "s.yaml"
    spec.write_text("name: s\nrepeats: 1\npairings:\n"
                    f"  - {{agent: claude-code, model: {MODEL}, endpoint: standin-anthropic}}\n")
    return spec


def test_plan_refuses_a_study_whose_endpoint_does_not_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    port = _dead_port()
    endpoints, cards = write_model_files(tmp_path / "model", f"http://127.0.0.1:{port}")
    files = ["--endpoints", str(endpoints), "--ratecards", str(cards)]
    code = main(["--home", str(tmp_path / "home"), "study", "plan", str(_study(tmp_path)), *files])
    err = capsys.readouterr().err
    assert code == EndpointUnreachable.exit_code
    assert f"endpoint standin-anthropic at http://127.0.0.1:{port} does not answer" in err
    assert f"sbx model serve --port {port}" in err  # a stand-in: the fix is to start it
    # offline on purpose: the check can be left out, and the plan is shown
    assert main(["--home", str(tmp_path / "home"), "study", "plan", str(_study(tmp_path)), *files,
                 "--no-connect"]) == 0
    assert "endpoint standin-anthropic (anthropic)" in capsys.readouterr().out


def test_plan_passes_when_the_endpoint_takes_a_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        endpoints, cards = write_model_files(tmp_path / "model", f"http://127.0.0.1:{port}")
        code = main(["--home", str(tmp_path / "home"), "study", "plan", str(_study(tmp_path)),
                     "--endpoints", str(endpoints), "--ratecards", str(cards)])
    assert code == 0, capsys.readouterr().err
    assert "1 pairings x 1 repeats = 1 runs" in capsys.readouterr().out


def test_a_paid_endpoint_that_does_not_answer_names_the_network_not_the_stand_in() -> None:
    ep = Endpoint(name="paid", api="openai-chat", base_url=f"http://127.0.0.1:{_dead_port()}", key_env="K")
    with pytest.raises(EndpointUnreachable, match=r"endpoint paid at http://127\.0\.0\.1:\d+ does not answer "
                                                 r"\(127\.0\.0\.1:\d+: .+\): check the network") as caught:
        check_reachable(ep)
    assert "sbx model serve" not in str(caught.value)
