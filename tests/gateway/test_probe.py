"""`sbx endpoints check` against the stand-in served as an endpoint."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.model import read_log
from orchestrator.specs.endpoints import Price

PRICE = Price(input=3.0, cached_input=0.3, cache_write=3.75, output=15.0)


@pytest.mark.parametrize("api", ["anthropic", "openai-chat", "openai-responses"])
def test_endpoints_check_prints_answer_tokens_and_cost(upstream_url: str, tmp_path: Path, api: str,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBX_CHECK_KEY", "sk-check-secret-999")
    (tmp_path / "endpoints.yaml").write_text(
        f"endpoints:\n  - name: local\n    api: {api}\n    base_url: '{upstream_url}'\n"
        "    key_env: SBX_CHECK_KEY\n    run_headers: true\n    models: [sbx-standin]\n")
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "c.yaml").write_text(
        f"date: {dt.date.today().isoformat()}\nmodels:\n  sbx-standin: {{input: 3.0, cached_input: 0.3, "
        "cache_write: 3.75, output: 15.0}\n")
    code = main(["endpoints", "check", "local", "--endpoints", str(tmp_path / "endpoints.yaml"),
                 "--ratecards", str(tmp_path / "cards")])
    out = capsys.readouterr().out
    (rec,) = read_log(tmp_path / "standin.jsonl")
    u = rec["usage"]
    assert code == 0 and rec["run_id"] == "check"
    assert "status   200  ok" in out and "answer   'THOUGHT: First a baseline." in out  # no tools: fenced step 0
    assert f"tokens   input {u['input']} (cached 0, cache write 0)  output {u['output']}" in out
    assert f"cost     ${PRICE.cost(type('U', (), u)):.6f}" in out
    assert "sk-check-secret-999" not in out


def test_endpoints_check_reports_a_refusing_endpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "endpoints.yaml").write_text(
        "endpoints:\n  - {name: down, api: openai-chat, base_url: 'http://127.0.0.1:9', models: [m]}\n")
    code = main(["endpoints", "check", "down", "--endpoints", str(tmp_path / "endpoints.yaml"),
                 "--ratecards", str(tmp_path / "none")])
    out = capsys.readouterr().out
    assert code == 1 and "502  provider_error" in out and "upstream connection failed" in out


def test_a_probe_that_succeeds_ends_refusing(gateway, standin, tmp_path: Path) -> None:
    from orchestrator.gateway.probe import probe
    from orchestrator.model import Fault

    standin.faults.extend([Fault(status=503)] * 3)
    results = [gateway.call(probe(gateway.gateway, "anthropic", "m", tmp_path / f"p{i}.jsonl.gz")) for i in range(3)]
    assert [r.outcome for r in results] == ["provider_error"] * 3 and gateway.refusing("anthropic")
    ok = gateway.call(probe(gateway.gateway, "anthropic", "m", tmp_path / "p3.jsonl.gz"))
    assert ok.outcome == "ok" and ok.status == 200 and not gateway.refusing("anthropic")
    assert ok.usage == read_log(tmp_path / "standin.jsonl")[-1]["usage"] and ok.cost_usd is not None
