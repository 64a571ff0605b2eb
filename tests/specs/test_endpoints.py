"""endpoints.yaml and rate cards: validation with key-named errors, keys read from env/file and never shown,
the card in force on a date, and cost arithmetic."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from orchestrator.failures import ConfigError
from orchestrator.specs.endpoints import Endpoint, Price, load_endpoints, load_ratecards
from orchestrator.specs.usage import TokenUsage

ROOT = Path(__file__).resolve().parents[2]


def test_repo_examples_load() -> None:
    eps = load_endpoints(ROOT / "endpoints.yaml")
    assert {"anthropic", "openai", "standin"} <= set(eps)
    assert eps["anthropic"].auth_header == "x-api-key" and eps["openai"].auth_header == "bearer"
    cards = load_ratecards(ROOT / "ratecards")
    assert cards.in_force(dt.date(2000, 1, 1)) is None
    assert cards.price("sbx-standin", dt.date(2030, 1, 1)) is not None


def test_errors_name_file_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "endpoints.yaml"
    path.write_text("endpoints:\n  - name: x\n    api: anthropic\n    base_url: https://api.anthropic.com/v1\n"
                    "    key: sk-literal\n")
    with pytest.raises(ConfigError) as err:
        load_endpoints(path)
    text = str(err.value)
    assert f"{path}:4: endpoints.0.base_url: Value error, leave out /v1" in text
    assert f"{path}:5: endpoints.0.key: Extra inputs are not permitted" in text
    assert "sk-literal" not in text


def test_urls_with_credentials_are_rejected() -> None:
    with pytest.raises(ValueError, match="must not carry credentials"):
        Endpoint(name="x", api="openai-chat", base_url="https://user:sk-abc@example.com")


def test_key_from_env_and_file_is_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBX_K", "  sk-env-123 \n")
    e = Endpoint(name="e", api="openai-chat", base_url="http://h", key_env="SBX_K")
    key = e.read_key()
    assert key.get_secret_value() == "sk-env-123" and "sk-env-123" not in repr(key) + str(key)
    (tmp_path / "k").write_text("sk-file-456\nsecond line ignored\n")
    (tmp_path / "endpoints.yaml").write_text("endpoints:\n  - {name: f, api: anthropic, base_url: 'http://h', key_file: k}\n")
    f = load_endpoints(tmp_path / "endpoints.yaml")["f"]
    assert f.key_file == tmp_path / "k" and f.read_key().get_secret_value() == "sk-file-456"
    assert "sk-file-456" not in f.model_dump_json()
    (tmp_path / "k").write_text("")
    with pytest.raises(ConfigError, match=r"key_file .* is empty"):
        f.read_key()
    assert Endpoint(name="s", api="anthropic", base_url="http://h").read_key() is None


def test_ratecard_in_force_and_cost(tmp_path: Path) -> None:
    (tmp_path / "2026-01-01.yaml").write_text("date: 2026-01-01\nmodels:\n  m: {input: 1, output: 2}\n")
    (tmp_path / "2026-06-01.yaml").write_text(
        "date: 2026-06-01\nmodels:\n  m: {input: 3, cached_input: 0.3, cache_write: 3.75, output: 15}\n")
    cards = load_ratecards(tmp_path)
    assert cards.price("m", dt.date(2026, 5, 31)).input == 1
    assert cards.price("m", dt.date(2026, 6, 1)).input == 3 and cards.price("other", dt.date(2026, 6, 1)) is None
    u = TokenUsage(input=1_000_000, cached_input=400_000, cache_write=100_000, output=200_000, reasoning=50_000)
    # 500k plain x 3 + 400k cached x 0.3 + 100k written x 3.75 + 200k out x 15, per million
    assert cards.price("m", dt.date(2026, 7, 1)).cost(u) == pytest.approx(1.5 + 0.12 + 0.375 + 3.0)
    assert Price(input=2, output=4).cost(u) == pytest.approx(2.0 + 0.8)  # cache prices default to input


def test_budget_gains_optional_model_limits() -> None:
    from orchestrator.specs.budget import Budget

    base = dict(name="b", cpu_seconds=10, hard_stop_cpu_seconds=20, experiments=1, experiment_timeout_s=5, cores=1,
                memory_mb=512, pids=64, wall_clock_minutes=1)
    assert Budget(**base).model_calls is None
    b = Budget(**base, model_calls=100, model_tokens=2_000_000, model_cost_usd=5.0)
    assert (b.model_calls, b.model_tokens, b.model_cost_usd) == (100, 2_000_000, 5.0)
    with pytest.raises(ValueError):
        Budget(**base, model_calls=-1)


def test_key_file_tilde_is_the_home_folder() -> None:
    eps = load_endpoints(ROOT / "endpoints.yaml")
    assert eps["openai-chat"].key_file == Path.home() / ".config/sbx/openai.key"


def test_check_pairing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.specs.endpoints import check_pairing

    eps = load_endpoints(ROOT / "endpoints.yaml")
    cards = load_ratecards(ROOT / "ratecards")
    assert check_pairing(eps, "standin", "sbx-standin", cards, dt.date(2026, 12, 1)) == []
    assert "no rate card prices 'sbx-standin'" in check_pairing(eps, "standin", "sbx-standin", cards,
                                                                 dt.date(2020, 1, 1))[0]
    with pytest.raises(ConfigError, match="does not list model 'gpt-4'"):
        check_pairing(eps, "standin", "gpt-4")
    with pytest.raises(ConfigError, match="no endpoint named 'nope'"):
        check_pairing(eps, "nope", "m")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set"):
        check_pairing(eps, "anthropic", "claude-sonnet-4-5")
