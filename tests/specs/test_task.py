from pathlib import Path

import pytest
import yaml

from orchestrator.failures import ConfigError
from orchestrator.specs import load_task


def test_flight_delays_bundle_loads() -> None:
    t = load_task("flight-delays")
    assert t.metric == "auc" and t.target == "dep_delayed_15min" and t.positive_label == "Y"
    assert (t.repo_dir / "train.py").is_file()
    assert (t.repo_dir / "program.md").is_file()
    assert set(t.hidden_sets()) == {"holdout", "later"}
    assert t.files.train.to == "data/train.csv" and t.files.eval.to == "data/eval.csv"


def test_a_hidden_set_cannot_be_marked_visible(tmp_path: Path) -> None:
    src = Path(load_task("flight-delays").root)
    data = yaml.safe_load((src / "task.yaml").read_text())
    data["files"]["holdout"]["visible_to_agent"] = True
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "train.py").write_text("")
    (tmp_path / "task.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="files.holdout.visible_to_agent"):
        load_task(tmp_path)


def test_program_states_the_rules_and_budget() -> None:
    text = (load_task("flight-delays").repo_dir / "program.md").read_text()
    for phrase in ("data/train.csv", "early-stopping", "predict_proba", "XGBoost", "18,000 CPU-seconds", "40 counted experiments"):
        assert phrase in text
