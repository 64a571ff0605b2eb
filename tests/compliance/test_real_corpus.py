"""The audit on real agent-written train.py files: the development set of issue 14 (48 files a public study's
agents delivered, with the study's final verdicts). It lives in `shared/corpus/real-train-py/` beside the
repository, not in it; the test skips, saying so, when it is not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.compliance.audit import audit_file

REPO = Path(__file__).resolve().parents[2]
CORPUS_NAME = Path("shared") / "corpus" / "real-train-py"
RULES = ("eval_labels_in_fit", "frame_statistics")


def _find() -> Path | None:
    for folder in REPO.parents:
        if (folder / CORPUS_NAME / "labels.json").is_file():
            return folder / CORPUS_NAME
    return None


CORPUS = _find()
pytestmark = pytest.mark.skipif(
    CORPUS is None, reason=f"the development set {CORPUS_NAME} is not beside {REPO} (nor above it)"
)


@pytest.fixture(scope="module")
def outcome() -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    assert CORPUS is not None
    labels: dict[str, dict[str, str]] = json.loads((CORPUS / "labels.json").read_text())
    verdicts = {name: {r.rule: r.verdict for r in audit_file(CORPUS / name)} for name in sorted(labels)}
    return labels, verdicts


@pytest.mark.parametrize("rule", RULES)
def test_precision_and_recall_on_real_files(
    rule: str, outcome: tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]
) -> None:
    labels, verdicts = outcome
    assert len(labels) == 48
    predicted = {n for n, v in verdicts.items() if v[rule] == "flagged"}
    actual = {n for n, label in labels.items() if label[rule] == "flagged"}
    assert actual, "the development set has violations of every rule"
    missed, extra = actual - predicted, predicted - actual
    recall = 1 - len(missed) / len(actual)
    precision = len(predicted & actual) / len(predicted) if predicted else 1.0
    assert recall == 1.0, f"{rule}: missed {sorted(missed)}"
    assert precision >= 0.95, f"{rule}: wrongly flagged {sorted(extra)}"


def test_no_real_file_is_left_undecided(
    outcome: tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]],
) -> None:
    _, verdicts = outcome
    assert {v for vs in verdicts.values() for v in vs.values()} <= {"clear", "flagged"}
