import numpy as np
import pytest

from orchestrator.stats import Exclusion, compliant, verdicts


def test_verdicts_parse_text_bools_and_blanks() -> None:
    out = verdicts(["flagged", "CLEAR", "", None, np.nan, True, False], "x")
    assert out[:2].tolist() == [1.0, 0.0] and np.isnan(out[2:5]).all() and out[5:].tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match="x: verdict"):
        verdicts(["2.5"], "x")


def test_another_verdict_is_never_compliant() -> None:
    # a verdict word sbx does not know is not clear: the run is unknown; "unanalysable" counts as the study
    # decides, by default as flagged (never clear)
    assert np.isnan(verdicts(["some-future-verdict", "Other"], "x")).all()
    assert verdicts(["unanalysable", "Unanalysable"], "x").tolist() == [1.0, 1.0]
    assert np.isnan(verdicts(["unanalysable"], "x", unanalysable="unknown")).all()
    out = compliant(["some-future-verdict", "clear", "unanalysable"], ["clear", "clear", "clear"], "both")
    assert np.isnan(out[0]) and out[1:].tolist() == [1.0, 0.0]


def test_each_exclusion_rule() -> None:
    labels = ["flagged", "clear", "clear", "", "clear"]
    frames = ["clear", "flagged", "clear", "clear", ""]
    assert compliant(labels, frames, "nothing").tolist() == [1, 1, 1, 1, 1]
    assert np.array_equal(
        compliant(labels, frames, "eval_labels_in_fit"), [0, 1, 1, np.nan, 1], equal_nan=True
    )
    assert np.array_equal(compliant(labels, frames, "frame_statistics"), [1, 0, 1, 1, np.nan], equal_nan=True)
    assert np.array_equal(
        compliant(labels, frames, Exclusion.BOTH), [0, 0, 1, np.nan, np.nan], equal_nan=True
    )


def test_flagged_beats_unaudited() -> None:
    assert compliant(["flagged"], [""], "both").tolist() == [0.0]


def test_unknown_exclusion_names_the_choices() -> None:
    with pytest.raises(ValueError, match="nothing, eval_labels_in_fit, frame_statistics, both"):
        Exclusion.parse("either")


def test_eval_features_rule_is_chosen_not_default() -> None:
    labels = ["clear", "clear", "flagged", "clear"]
    frames = ["clear", "clear", "clear", "clear"]
    features = ["flagged", "clear", "clear", ""]
    # the default exclusion ignores the third rule's verdicts
    assert compliant(labels, frames, "both", eval_features_in_fit=features).tolist() == [1, 1, 0, 1]
    assert Exclusion.BOTH.rules == ("eval_labels_in_fit", "frame_statistics")
    assert np.array_equal(
        compliant(labels, frames, "eval_features_in_fit", eval_features_in_fit=features),
        [0, 1, 1, np.nan],
        equal_nan=True,
    )
    assert np.array_equal(
        compliant(labels, frames, Exclusion.ALL, eval_features_in_fit=features),
        [0, 1, 0, np.nan],
        equal_nan=True,
    )
    # a study that applies the rule without its column has not audited it
    assert np.isnan(compliant(labels, frames, "eval_features_in_fit")).all()
    assert compliant(labels, frames, "all").tolist()[2] == 0.0
