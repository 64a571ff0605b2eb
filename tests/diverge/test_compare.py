import gzip
from pathlib import Path

import pytest

from orchestrator.diverge.compare import DivergenceClass, compare_runs, differences
from orchestrator.diverge.normalise import AS_RECORDED, Normalisation
from orchestrator.diverge.reader import read_transcript
from orchestrator.specs.transcript import encode_record
from tests.diverge.standin import AGENTS, Variation, expected, pair

VARIATIONS = [
    Variation("response", 0),
    Variation("response", 2),
    Variation("tool_result", 1),
    Variation("tool_result", 3),
    Variation("start"),
    Variation("stop", 3),
    Variation("fingerprint", 1),
]


@pytest.mark.parametrize("agent", AGENTS)
def test_identical_content_is_identical_when_normalised_and_not_byte_for_byte(agent: str) -> None:
    for seed in range(3):
        a, b = pair(agent, seed)
        normalised = compare_runs(a, b)
        assert normalised.identical, (agent, seed, normalised.where)
        assert normalised.divergence_class is None and normalised.compared == len(a) == len(b)
        raw = compare_runs(a, b, AS_RECORDED)
        assert not raw.identical and raw.first_divergence == 0


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("variation", VARIATIONS, ids=lambda v: f"{v.kind}@{v.at}")
def test_first_divergence_and_class_equal_the_stand_in_ground_truth(agent: str, variation: Variation) -> None:
    for seed in range(2):
        a, b = pair(agent, 10 + seed, variation)
        c = compare_runs(a, b)
        assert (c.first_divergence, c.divergence_class) == expected(agent, variation), c.where


def test_calls_in_another_order_are_found_with_and_without_speakers() -> None:
    # OpenCode's title generator runs alongside its first turn: in run B the gateway got the turn first
    a, b = pair("opencode", 3, Variation("order"))
    c = compare_runs(a, b)
    assert (c.first_divergence, c.divergence_class) == expected("opencode", Variation("order"))
    a = [r.model_copy(update={"speaker": None}) for r in a]
    b = [r.model_copy(update={"speaker": None}) for r in b]
    c = compare_runs(a, b)
    assert (c.first_divergence, c.divergence_class) == (0, DivergenceClass.CALL_ORDER)


def test_the_speaker_of_the_divergence_is_reported() -> None:
    a, b = pair("opencode", 4, Variation("response", 1))
    c = compare_runs(a, b)
    assert c.first_divergence == 2 and (c.speaker_a, c.speaker_b) == ("build", "build")
    a, b = pair("opencode", 4, Variation("order"))
    c = compare_runs(a, b)
    assert (c.speaker_a, c.speaker_b) == ("title", "build")
    assert [d.speaker_a for d in c.calls] == ["title", "build", "build", "build", "build", "build"]


@pytest.mark.parametrize(
    ("agent", "option"), [("claude-code", {"thinking": True}), ("codex", {"reasoning": True})]
)
def test_opaque_blobs_differ_unless_declared_comparable(agent: str, option: dict) -> None:
    a, b = pair(agent, 5, **option)
    c = compare_runs(a, b)
    assert (c.first_divergence, c.divergence_class, c.opaque_only) == (0, DivergenceClass.RESPONSE, True)
    assert all(w.endswith(("signature", "encrypted_content")) for w in c.where)
    assert compare_runs(a, b, Normalisation(opaque=True)).identical
    # with the blobs comparable, a real difference is still found where the stand-in put it
    a, b = pair(agent, 5, Variation("response", 2), **option)
    c = compare_runs(a, b, Normalisation(opaque=True))
    assert (c.first_divergence, c.divergence_class) == (2, DivergenceClass.RESPONSE)


def test_usage_and_pings_are_left_out_only_as_declared() -> None:
    for seed in range(20):  # find a pair whose provider cache was warm in one run only
        a, b = pair("claude-code", seed)
        with_usage = compare_runs(a, b, Normalisation(ignore_usage=False))
        if not with_usage.identical:
            break
    assert with_usage.where == ("response.events[0][1].message.usage.cache_read_input_tokens",)
    assert compare_runs(a, b).identical
    pings = compare_runs(a, b, Normalisation(ignore_pings=False))
    assert not pings.identical and any("[0]" in w or ".type" in w for w in pings.where)


def test_comparing_files_equals_comparing_records(tmp_path: Path) -> None:
    a, b = pair("pi", 6, Variation("tool_result", 2))
    for name, run in (("a", a), ("b", b)):
        with gzip.open(tmp_path / f"{name}.jsonl.gz", "wb") as f:
            f.writelines(encode_record(r) for r in run)
    from_files = compare_runs(
        read_transcript(tmp_path / "a.jsonl.gz"), read_transcript(tmp_path / "b.jsonl.gz")
    )
    assert from_files == compare_runs(a, b)
    assert (from_files.first_divergence, from_files.divergence_class) == (3, DivergenceClass.REQUEST)
    assert from_files.where[0].startswith("request.body.input")


def test_differences_lists_locations_in_document_order() -> None:
    x = {"a": [1, 2, {"b": 3}], "c": "x", "d": 1}
    y = {"a": [1, 5, {"b": 4}, 9], "c": "x", "e": 2}
    assert differences(x, y, "r") == ["r.a[1]", "r.a[2].b", "r.a[3]", "r.d", "r.e"]
    assert differences(x, y, "r", limit=2) == ["r.a[1]", "r.a[2].b"]
