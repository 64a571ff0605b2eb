"""What the report needs beyond the runs: ReportSpec, the study spec's `report:` block, and the CLI flags."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import pytest
from pydantic import ValidationError

from orchestrator.cli.report import report_settings
from orchestrator.failures import ConfigError
from orchestrator.specs.study import ReportSpec, StudySpec


def _args(**kw: object) -> argparse.Namespace:
    base = {"settings": None, "reference": [], "baseline": [], "budget": None, "top_n": None}
    return argparse.Namespace(**{**base, **kw})


def test_report_spec_rejects_unknown_keys_and_a_reference_that_is_no_factor() -> None:
    with pytest.raises(ValidationError, match="baselines"):
        ReportSpec.model_validate({"baselines": {}})
    with pytest.raises(ValidationError, match="not among the factors"):
        ReportSpec.model_validate({"reference": {"endpoint": "x"}})
    with pytest.raises(ValidationError, match="cached_input"):
        ReportSpec.model_validate({"rate_card": {"name": "c", "date": "2026-09-16",
                                                 "prices": {"m": {"input": 1, "output": 2, "cached_input": -1}}}})


def test_a_study_spec_without_a_report_block_stays_as_it_was_stored() -> None:
    spec = {"name": "s", "pairings": [{"agent": "noop"}], "repeats": 2}
    assert "report" not in StudySpec.model_validate(spec).canonical()
    with_report = StudySpec.model_validate({**spec, "report": {"reference": {"model": "m"}}})
    assert with_report.canonical()["report"]["reference"] == {"model": "m"}


def test_flags_override_the_settings_file(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text("reference: {model: a}\nbaseline: {holdout_score: 0.7}\nbudget_cpu_seconds: 100\n")
    out = report_settings(_args(settings=f, reference=["model=b", "task_set=x"], baseline=["later_score=0.71"],
                                budget=200.0, top_n=5))
    assert out.reference == {"model": "b", "task_set": "x"} and "task_set" in out.factors
    assert out.baseline == {"holdout_score": 0.7, "later_score": 0.71}
    assert out.budget_cpu_seconds == 200 and out.top_n == 5
    with pytest.raises(ConfigError, match="--baseline takes NAME=VALUE"):
        report_settings(_args(baseline=["0.7"]))
    with pytest.raises(ConfigError, match="baseline"):
        report_settings(_args(baseline=["holdout=0.7"]))
    bad = tmp_path / "bad.yaml"
    bad.write_text("refrence: {model: a}\n")
    with pytest.raises(ConfigError, match="refrence"):
        report_settings(_args(settings=bad))


def test_a_studys_stored_report_block_is_the_default(tmp_path: Path) -> None:
    stored = {"reference": {"model": "m"}, "baseline": {"holdout_score": 0.7}}
    assert report_settings(_args(), stored).reference == {"model": "m"}
    assert report_settings(_args(top_n=3), stored).top_n == 3 and report_settings(_args(), None) == ReportSpec()
    f = tmp_path / "s.yaml"
    f.write_text("top_n: 4\n")
    assert report_settings(_args(settings=f), stored).reference == {}  # a settings file replaces the block
    with pytest.raises(ConfigError, match="the study spec's report block"):
        report_settings(_args(), {"top": 1})


def test_json_output_carries_every_tables_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from orchestrator.cli import main

    from .conftest import make_ml_study

    csv = tmp_path / "runs.csv"
    make_ml_study(runs=5).to_csv(csv, index=False)
    assert main(["report", "--runs-csv", str(csv), "--out", str(tmp_path / "r"), "--json",
                 "--baseline", "holdout_score=0.72"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"pairings", "baseline", "best_of_k_pooled"} <= set(doc["tables"])
    row = doc["tables"]["baseline"][0]
    assert row["score"] == "holdout_score" and row["baseline"] == 0.72
    for name, rows in doc["tables"].items():
        assert len(rows) == len(pd.read_csv(tmp_path / "r" / "tables" / f"{name}.csv")), name
