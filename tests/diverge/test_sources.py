"""Paired outcomes imported from a CSV, transcripts found by run id, and each pair compared from files."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest

from orchestrator.diverge.analysis import RunSide, analyse
from orchestrator.diverge.compare import DivergenceClass
from orchestrator.diverge.sources import read_pairs_csv, transcripts_in, with_evidence
from orchestrator.failures import DataError
from orchestrator.specs.diverge import DivergeDefinitions, Thresholds
from orchestrator.specs.transcript import encode_record
from tests.diverge.standin import Variation, expected, pair

HEADER = "task,repeat,run_a,run_b,outcome_a,outcome_b,seed,node_a,node_b,started_at_a,started_at_b,order_a,order_b\n"


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text(text)
    return path


def write_transcript(path: Path, records, *, cut: bool = False) -> None:
    data = b"".join(encode_record(r) for r in records)
    if cut:  # a run killed mid-write: the last line is incomplete
        data = data[: len(data) - 40]
    with gzip.open(path, "wb") as f:
        f.write(data)


def test_a_csv_of_paired_outcomes_becomes_pairs(tmp_path: Path) -> None:
    path = _csv(
        tmp_path,
        HEADER
        + "t1,1,ra1,rb1,pass,fail,7,n1,n2,1764500000,2026-11-30T10:00:00+00:00,0,1\n"
        + "t1,2,,,1,1,,,,,,,\n\n",
    )
    first, second = read_pairs_csv(path)
    assert (first.task, first.repeat) == ("t1", 1)
    assert first.a == RunSide("ra1", outcome=True, seed=7, node="n1", started_at=1764500000.0, order=0)
    assert (
        first.b.run_id == "rb1"
        and first.b.outcome is False
        and first.b.started_at == datetime(2026, 11, 30, 10, tzinfo=UTC).timestamp()
    )
    assert second.a.run_id == "t1#2:a" and second.a.seed is None and second.b.outcome is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("task,outcome_a,outcome_b\nt,1,0\n", "missing column repeat"),
        ("task,repeat,outcome_a\nt,1,1\n", "needs outcome_a and outcome_b"),
        ("task,repeat,outcome_a,outcome_b\nt,1,maybe,1\n", "line 2, column 'outcome_a': expected true/false"),
        ("task,repeat,outcome_a,outcome_b\nt,1.5,1,1\n", "column 'repeat': expected a whole number"),
        ("task,repeat,outcome_a,outcome_b\nt,1,1,1\nt,1,0,0\n", "line 3: task 't', repeat 1 appears twice"),
        (
            "task,repeat,outcome_a,outcome_b,run_a\nt,1,1,1,../../etc/passwd\n",
            "column 'run_a': expected a run id",
        ),
        ("task,repeat,outcome_a,outcome_b,started_at_a\nt,1,1,1,2026-11-30T10:00:00\n", "UTC offset"),
        ("task,repeat,outcome_a,outcome_b\nt,1,1\n", "line 2: 3 cells for 4 columns"),
        ("task,repeat,outcome_a,outcome_b\n", "no pairs"),
    ],
)
def test_csv_errors_name_the_file_line_and_column(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        read_pairs_csv(_csv(tmp_path, text))


def test_transcripts_are_found_by_run_id_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "r1.jsonl.gz").write_bytes(b"")
    (tmp_path / "r2.jsonl.gz").symlink_to(tmp_path / "r1.jsonl.gz")
    locate = transcripts_in(tmp_path)
    assert locate("r1") == tmp_path / "r1.jsonl.gz"
    assert locate("r2") is None and locate("r3") is None and locate("../r1") is None
    with pytest.raises(DataError, match="not a folder"):
        transcripts_in(tmp_path / "nowhere")


def test_pairs_from_a_csv_and_a_folder_of_transcripts_match_the_ground_truth(tmp_path: Path) -> None:
    variations = [Variation(), Variation("response", 2), Variation("tool_result", 1), Variation("stop", 3)]
    lines = [HEADER.strip()]
    for i, variation in enumerate(variations):
        a, b = pair("codex", 40 + i, variation)
        write_transcript(tmp_path / f"a{i}.jsonl.gz", a)
        write_transcript(tmp_path / f"b{i}.jsonl.gz", b)
        lines.append(f"t{i},1,a{i},b{i},1,{int(i % 2 == 0)},3,,,,,,")
    lines.append("t9,1,a9,b9,1,1,3,,,,,,")  # no transcripts for this pair
    pairs = read_pairs_csv(_csv(tmp_path, "\n".join(lines) + "\n"))
    definitions = DivergeDefinitions(thresholds=Thresholds(min_at_risk=1, n_resamples=200))
    done = with_evidence(pairs, transcripts_in(tmp_path), definitions)
    for p, variation in zip(done, variations, strict=False):
        fd, kind = expected("codex", variation)
        assert (p.comparison.first_divergence, p.comparison.divergence_class) == (fd, kind)
    assert done[-1].comparison is None
    out = analyse(done, definitions, seed=0, preregistered=False)
    assert out.check.pairs == 5 and out.check.without_comparison == 1
    assert out.divergence_classes.value[DivergenceClass.CALL_COUNT.value] == 1
    assert out.divergence_classes.value["identical"] == 1


def test_a_transcript_cut_short_is_compared_up_to_the_cut_and_a_broken_one_is_reported(
    tmp_path: Path,
) -> None:
    a, b = pair("claude-code", 5, Variation())
    write_transcript(tmp_path / "a.jsonl.gz", a)
    write_transcript(tmp_path / "b.jsonl.gz", b, cut=True)
    (tmp_path / "c.jsonl.gz").write_bytes(b"not gzip")
    pairs = read_pairs_csv(
        _csv(tmp_path, "task,repeat,run_a,run_b,outcome_a,outcome_b\nt,1,a,b,1,1\nt,2,a,c,1,1\n")
    )
    problems: list[str] = []
    cut, broken = with_evidence(pairs, transcripts_in(tmp_path), DivergeDefinitions(), problems=problems)
    assert cut.truncated and cut.comparison.calls_b == len(b) - 1
    assert cut.comparison.first_divergence == len(b) - 1  # A made one more call than B's transcript holds
    assert broken.comparison is None and len(problems) == 1 and "c.jsonl.gz" in problems[0]
