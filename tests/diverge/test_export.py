"""The analysis as one strict JSON document."""

from __future__ import annotations

import json
import math
from enum import Enum

import numpy as np
import pytest

from orchestrator.diverge.analysis import PairedRuns, RunSide, analyse, pair_evidence
from orchestrator.diverge.export import analysis_json, plain
from orchestrator.specs.diverge import DivergeDefinitions, Thresholds
from tests.diverge.standin import Variation, pair


class Colour(Enum):
    RED = "red"


def test_plain_values() -> None:
    assert plain({"a": (1, 2.5, math.nan, math.inf), "b": frozenset({"y", "x"}), "c": Colour.RED}) == {
        "a": [1, 2.5, None, None],
        "b": ["x", "y"],
        "c": "red",
    }
    assert plain(np.float64(0.5)) == 0.5 and plain(np.bool_(True)) is True and plain(np.arange(2)) == [0, 1]
    assert plain(True) is True and plain(None) is None
    with pytest.raises(TypeError, match="object"):
        plain(object())


def test_the_analysis_is_one_strict_json_document() -> None:
    d = DivergeDefinitions(thresholds=Thresholds(min_at_risk=1, n_resamples=200))
    pairs = []
    for i in range(6):
        a, b = pair("claude-code", i, Variation("response", i % 3) if i % 2 else Variation())
        comparison, causes = pair_evidence(a, b, d)
        pairs.append(
            PairedRuns(
                f"t{i % 3}",
                i,
                RunSide(f"a{i}", outcome=True, seed=1, node="n1"),
                RunSide(f"b{i}", outcome=i % 2 == 0, seed=1, node="n2"),
                comparison,
                causes,
            )
        )
    out = analysis_json(analyse(pairs, d, seed=0))
    text = json.dumps(out, allow_nan=False)  # no NaN anywhere
    back = json.loads(text)
    assert back["outcome_table"]["value"]["both"] == 3 and back["outcome_table"]["exploratory"] is False
    assert back["divergence_classes"]["value"]["response"] == 3
    assert back["hazard"]["value"]["rows"][0]["at_risk"] == 6
    assert back["definitions"]["thresholds"]["min_at_risk"] == 1 and back["preregistered"] is True
    assert back["definitions"]["declared"] == sorted(back["definitions"]["declared"])


def test_derived_numbers_are_in_the_document() -> None:
    cells = [(1, 1)] * 67 + [(1, 0)] * 23 + [(0, 1)] * 21 + [(0, 0)] * 89
    pairs = [
        PairedRuns(
            f"t{i // 4}",
            i % 4,
            RunSide(f"a{i}", outcome=bool(x), seed=1),
            RunSide(f"b{i}", outcome=bool(y), seed=1),
        )
        for i, (x, y) in enumerate(cells)
    ]
    out = analysis_json(analyse(pairs, DivergeDefinitions(thresholds=Thresholds(n_resamples=200)), seed=0))
    table = out["outcome_table"]["value"]
    assert round(table["mcnemar_p"], 3) == 0.880 and table["disagreement"] == 0.22 and table["pairs"] == 200
