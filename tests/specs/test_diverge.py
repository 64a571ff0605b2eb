from pathlib import Path

import pytest

from orchestrator.failures import ConfigError
from orchestrator.specs.diverge import ANALYSES, DivergeDefinitions, load_definitions

YAML = """\
eligibility:
  require_transcripts: true
agreement:
  kind: pass_fail
thresholds:
  min_at_risk: 15
  between_task_share: 0.2
causes:
  - name: fingerprint
    observe: response_value_differs
    key: system_fingerprint
    control: {at_call: 0}
  - name: served-model
    observe: response_header_differs
    key: openai-model
declared: [outcome_table, disagreement, hazard]
"""


def test_definitions_load_from_yaml(tmp_path: Path) -> None:
    path = tmp_path / "diverge.yaml"
    path.write_text(YAML)
    d = load_definitions(path)
    assert d.thresholds.min_at_risk == 15 and d.thresholds.n_resamples == 10_000
    assert [c.name for c in d.causes] == ["fingerprint", "served-model"]
    assert d.causes[0].control is not None and d.causes[1].control is None
    assert d.declared == {"outcome_table", "disagreement", "hazard"}
    assert DivergeDefinitions().declared == set(ANALYSES)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("thresholds:\n  min_at_rsk: 3\n", r":2: thresholds.min_at_rsk: Extra inputs are not permitted"),
        ("agreement:\n  kind: score\n", "agreement: Value error, agreement by score needs pass_threshold"),
        (
            "causes:\n  - {name: x, observe: outcome_differs, key: k}\n",
            "give key for a value or header cause",
        ),
        ("causes:\n  - {name: x, observe: response_value_differs}\n", "give key for a value or header cause"),
        (
            "causes:\n  - {name: x, observe: outcome_differs}\n  - {name: x, observe: outcome_differs}\n",
            "cause names must be unique",
        ),
        ("declared: [hazzard]\n", r"declared.0: Input should be 'outcome_table'"),
        ("thresholds:\n  confidence: 1.5\n", "thresholds.confidence: Input should be less than 1"),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "diverge.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_definitions(path)
