"""`sbx study plan` / `run` check a study's judge like a pairing's model side (cli/study.py _check_models):
its endpoint, key, model and rate card; a problem is a ConfigError naming the judge before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from orchestrator.cli.study import _check_models
from orchestrator.failures import ConfigError
from orchestrator.specs.study import load_study
from tests.run.standin_setup import CARD_DATE, KEY_ENV, MODEL, PRICE, REAL_KEY, write_model_files

PROMPT = "Issue:\n{instruction}\nPatch:\n{diff}\nEnd with VERDICT: PASS or VERDICT: FAIL."


def _study(tmp_path: Path, **judge: str):
    data = {"name": "s", "task": "calc-add-negative", "pairings": [{"agent": "oracle"}], "repeats": 1,
            "judge": {"name": "j", "endpoint": "standin-chat", "model": MODEL, "prompt": PROMPT, **judge}}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(data))
    return load_study(tmp_path / "study.yaml")


def test_the_judge_is_checked_and_priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoints, cards = write_model_files(tmp_path / "model", "http://127.0.0.1:9")
    monkeypatch.setenv(KEY_ENV, REAL_KEY)
    found = _check_models(_study(tmp_path), endpoints, cards)
    assert found == {"judge j": {"agent": None, "model": MODEL, "endpoint": "standin-chat", "api": "openai-chat",
                                 "rate_card": CARD_DATE.isoformat(), "price": PRICE.model_dump()}}
    with pytest.raises(ConfigError, match=r"s: judge j: .*nowhere"):
        _check_models(_study(tmp_path, endpoint="nowhere"), endpoints, cards)
    with pytest.raises(ConfigError, match=r"s: judge j: .*other-model"):
        _check_models(_study(tmp_path, model="other-model"), endpoints, cards)
    with pytest.raises(ConfigError, match=r"s: judge j: .*no endpoints file"):
        _check_models(_study(tmp_path), tmp_path / "missing.yaml", cards)
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ConfigError, match=r"s: judge j: .*" + KEY_ENV):
        _check_models(_study(tmp_path), endpoints, cards)
