"""Transcripts the real gateway wrote of a scripted agent talking to the stand-in: compared call by call,
every pair's first divergence and class equal what the stand-in logged, and ids matter only unnormalised."""

from __future__ import annotations

from itertools import combinations

import pytest

from orchestrator.diverge.compare import compare_runs
from orchestrator.diverge.normalise import AS_RECORDED
from orchestrator.diverge.reader import read_transcript
from tests.diverge.gateway_runs import StandInGateway, expected


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory):
    with StandInGateway(tmp_path_factory.mktemp("gw")).running() as gw:
        return [
            gw.run(f"run{i}", seed, tool_result_at=3 if i in (2, 5) else None)
            for i, seed in enumerate(range(40, 52))
        ]


def test_every_pair_of_gateway_transcripts_matches_the_logged_ground_truth(runs) -> None:
    seen = set()
    for a, b in combinations(runs, 2):
        comparison = compare_runs(read_transcript(a.transcript), read_transcript(b.transcript))
        want = expected(a, b)
        assert (comparison.first_divergence, comparison.divergence_class) == want, (a.run_id, b.run_id)
        seen.add(want[1])
    assert len(seen) == 3  # response and request divergences, and identical pairs, all occurred


def test_identical_content_is_identical_with_ids_normalised_and_not_without(runs) -> None:
    same = [(a, b) for a, b in combinations(runs, 2) if expected(a, b) == (None, None)]
    assert same, "the seeds were chosen so that some runs play the same variants"
    for a, b in same:
        ta, tb = read_transcript(a.transcript), read_transcript(b.transcript)
        assert a.model_seed != b.model_seed and len(ta) == len(tb) == 7
        assert compare_runs(ta, tb).identical
        raw = compare_runs(ta, tb, AS_RECORDED)
        # byte for byte, the message and tool-use ids the stand-in drew from its seed differ at once
        assert raw.first_divergence == 0 and "response.body.id" in raw.where
