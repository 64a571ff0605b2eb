"""The example divergence study and definitions docs/divergence.md points to are real, valid files: the
study plans against the repository's endpoints and rate cards, and the definitions file with it (issue 24,
item 5: no example study or definitions file to start from)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.paths import REPO_ROOT
from orchestrator.specs.diverge import load_definitions
from orchestrator.specs.study import load_study

STUDY = REPO_ROOT / "studies" / "divergence.yaml"
DEFINITIONS = REPO_ROOT / "studies" / "divergence-definitions.yaml"


def test_the_docs_name_the_example_files() -> None:
    doc = (REPO_ROOT / "docs" / "divergence.md").read_text()
    assert "studies/divergence.yaml" in doc and "studies/divergence-definitions.yaml" in doc


def test_the_example_study_has_two_same_seed_arms_and_a_control() -> None:
    spec = load_study(STUDY)
    arms = {p.name: p for p in spec.pairings}
    assert set(arms) == {"A", "B", "C"} and arms["B"].seed_as == "A" and arms["C"].seed_as is None
    definitions = load_definitions(DEFINITIONS)
    assert all(c.control is not None for c in definitions.causes)  # else `sbx diverge plan` refuses them
    assert definitions.thresholds.min_at_risk <= spec.repeats  # the hazard can be shown for this study


def test_the_example_study_plans_and_its_definitions_are_filed(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    home = ["--home", str(tmp_path / "home")]
    files = ["--endpoints", str(REPO_ROOT / "endpoints.yaml"), "--ratecards", str(REPO_ROOT / "ratecards")]
    assert main([*home, "study", "plan", str(STUDY), *files, "--no-connect", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["runs"] == 9 and plan["models"]["A"]["endpoint"] == "standin-responses"
    assert main([*home, "diverge", "plan", str(STUDY), str(DEFINITIONS), "--json"]) == 0
    filed = json.loads(capsys.readouterr().out)
    assert filed["study"] == "divergence" and filed["version"] == 1, filed
